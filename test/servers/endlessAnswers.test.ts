/**
 * A server that never stops answering, on every route that is not streamed: the client reads a bounded amount
 * and fails with a message, long before the request's timeout, instead of filling the extension host's memory.
 * (Streamed completions are bounded by line length and characters per token: serverStubs.test.ts.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probeServer } from '../../src/servers/probeServer';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { MAX_ANSWER_BYTES } from '../../src/servers/streamLines';
import { postToRoot } from '../../src/servers/tokenizeRoutes';
import { floodServer, stubServer } from './stubServers';

const TIMEOUT_MS = 120_000;

test('an endless /tokenize, /props or model list: a protocol error after the answer cap, not the timeout', async () => {
  const flood = await floodServer();
  try {
    const o = { kind: 'llama.cpp' as const, url: flood.url, timeoutMs: TIMEOUT_MS };
    await assert.rejects(postToRoot(o, '/tokenize', { content: 'x' }), new RegExp(`more than ${MAX_ANSWER_BYTES} bytes in answer to /tokenize`));
    await assert.rejects(probeServer(o), new RegExp(`more than ${MAX_ANSWER_BYTES} bytes in answer to /props`));
    await assert.rejects(probeServer({ ...o, kind: 'openai', model: 'm' }), /more than \d+ bytes in answer to \/v1\/models/);
    await assert.rejects(probeServer({ ...o, kind: 'ollama', model: 'm' }), /more than \d+ bytes in answer to \/api\/show/);
  } finally {
    await flood.close();
  }
});

test('an error whose body never ends: the HTTP error at once, its endless body left unread', async () => {
  const flood = await floodServer(500);
  try {
    for (const kind of ['llama.cpp', 'openai', 'ollama'] as const) {
      const gen = new ServerGenerator({ kind, url: flood.url, model: 'm', timeoutMs: TIMEOUT_MS });
      await assert.rejects(gen.generate('def f(', { maxNewTokens: 4 }), /answered 500/, kind);
    }
    await assert.rejects(postToRoot({ kind: 'llama.cpp', url: flood.url, timeoutMs: TIMEOUT_MS }, '/tokenize', {}), /answered 500/);
  } finally {
    await flood.close();
  }
});

test('an answer cut off mid-body: the request failed, said as a dropped connection is', async () => {
  const cut = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"tokens": [1, 2,');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  try {
    const o = { kind: 'llama.cpp' as const, url: cut.url, timeoutMs: TIMEOUT_MS };
    await assert.rejects(postToRoot(o, '/tokenize', { content: 'x' }), /the request to .*\/tokenize failed/);
    await assert.rejects(probeServer(o), /the request to .*\/props failed/);
  } finally {
    await cut.close();
  }
});
