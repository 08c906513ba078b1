/**
 * The server generator against local servers that follow (or break) the documented protocols: Ollama's
 * /api/generate NDJSON stream (no real Ollama can run here; the stub follows docs.ollama.com/api), a server
 * that never answers, one that is busy (429 + Retry-After), a cut stream, a refused connection.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerGenerator } from '../../src/backends/serverGenerator';
import { retryAfterMs } from '../../src/backends/serverErrors';
import { stubServer } from './stubServers';

const infill = { prefix: 'def add(a, b):\n', suffix: '\n', middle: '    return ', extra: [] };

test('ollama: FIM through suffix, options mapped, NDJSON streamed, stats from the final line', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write(`${JSON.stringify({ model: 'm', response: 'a +', done: false })}\n`);
    res.write(`${JSON.stringify({ model: 'm', response: ' b', done: false })}\n`);
    res.end(
      `${JSON.stringify({ model: 'm', response: '', done: true, done_reason: 'stop', prompt_eval_count: 12, eval_count: 3, prompt_eval_duration: 5e6, eval_duration: 2e6 })}\n`,
    );
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: srv.url, model: 'qwen2.5-coder:1.5b', timeoutMs: 5000 });
    const streamed: string[] = [];
    const r = await gen.generate('unused', { maxNewTokens: 32, temperature: 0.2, stop: ['\n\n'] }, { infill, onText: (d) => streamed.push(d) });
    assert.equal(r.text, 'a + b');
    assert.equal(streamed.join(''), 'a + b');
    assert.equal(r.finishReason, 'eos');
    assert.equal(r.stats.promptTokens, 12);
    assert.equal(r.stats.generatedTokens, 3);
    assert.equal(r.stats.prefillMs, 5);
    const body = srv.requests[0] as Record<string, unknown>;
    assert.equal(body.model, 'qwen2.5-coder:1.5b');
    assert.equal(body.prompt, 'def add(a, b):\n    return ');
    assert.equal(body.suffix, '\n');
    assert.equal(body.stream, true);
    assert.deepEqual((body.options as Record<string, unknown>).num_predict, 32);
    assert.deepEqual((body.options as Record<string, unknown>).stop, ['\n\n']);
  } finally {
    await srv.close();
  }
});

test('a stop rule that fires ends the request early, and the text stops before it', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200);
    res.write(`${JSON.stringify({ response: 'x = 1\ny = 2\n', done: false })}\n`);
    // Never finishes: the client must end it.
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: srv.url, timeoutMs: 5000 });
    const r = await gen.generate('p', { maxLines: 1 }, { infill });
    assert.equal(r.text, 'x = 1');
    assert.equal(r.finishReason, 'stop');
  } finally {
    await srv.close();
  }
});

test('a server that accepts and never answers: an error after the timeout, not a hang', async () => {
  const srv = await stubServer(() => {
    // no response at all
  });
  try {
    const gen = new ServerGenerator({ kind: 'openai', url: srv.url, timeoutMs: 300 });
    const t0 = performance.now();
    await assert.rejects(gen.generate('p', {}), /gave no complete answer within 300 ms/);
    assert.ok(performance.now() - t0 < 2000);
  } finally {
    await srv.close();
  }
});

test('cancel aborts the HTTP request and answers cancelled at once', async () => {
  let closed = false;
  const srv = await stubServer((req, res) => {
    res.writeHead(200);
    res.write(`data: ${JSON.stringify({ choices: [{ text: 'a', finish_reason: null }] })}\n\n`);
    req.socket.on('close', () => (closed = true));
  });
  try {
    const gen = new ServerGenerator({ kind: 'openai', url: srv.url, timeoutMs: 5000 });
    const ac = new AbortController();
    const p = gen.generate('p', {}, { signal: ac.signal, onText: () => ac.abort() });
    const r = await p;
    assert.equal(r.finishReason, 'cancelled');
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(closed, 'the connection was closed, so the server can free the slot');
  } finally {
    await srv.close();
  }
});

test('429 with Retry-After: a clear error, and requests fail fast until then', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(429, { 'retry-after': '30' });
    res.end('slow down');
  });
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    await assert.rejects(gen.generate('p', {}), /answered 429: the server is busy, retry after 30 s/);
    await assert.rejects(gen.generate('p', {}), /busy/);
    assert.equal(srv.requests.length, 1, 'the second request never reached the server');
  } finally {
    await srv.close();
  }
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now()) !== undefined, true);
  assert.equal(retryAfterMs('soon'), undefined);
});

test('401, 404, a cut stream, a line that is not JSON, a refused connection: one clear message each', async () => {
  const cases: [number | 'cut' | 'garbage', RegExp][] = [
    [401, /refused the API key/],
    [404, /no such endpoint or model/],
    ['cut', /cut the stream off/],
    ['garbage', /not JSON/],
  ];
  for (const [what, says] of cases) {
    const srv = await stubServer((_req, res) => {
      if (typeof what === 'number') {
        res.writeHead(what);
        res.end('{"error":"x"}');
      } else {
        res.writeHead(200);
        res.end(what === 'cut' ? `data: ${JSON.stringify({ choices: [{ text: 'half', finish_reason: null }] })}\n\n` : 'data: <html>\n\n');
      }
    });
    try {
      const gen = new ServerGenerator({ kind: 'openai', url: srv.url, timeoutMs: 5000 });
      await assert.rejects(gen.generate('p', {}), says, String(what));
    } finally {
      await srv.close();
    }
  }
  const closed = await stubServer(() => undefined);
  const url = closed.url;
  await closed.close();
  await assert.rejects(new ServerGenerator({ kind: 'openai', url, timeoutMs: 2000 }).generate('p', {}), /nothing listens there/);
});
