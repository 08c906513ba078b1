/**
 * Connecting to a server: what each kind says about its model and context, and one clear message for a
 * wrong model, key or URL. The OpenAI-compatible and Ollama answers are stubs shaped as vLLM's /v1/models
 * and Ollama's documented /api/show; llama.cpp's /props is checked against the real server in
 * llamaServerProbe.test.ts.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test } from 'node:test';
import { probeServer } from '../../src/servers/probeServer';
import { stubServer } from './stubServers';

/** A port nothing listens on (one that was just free). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

test("openai: the served model is found with vLLM's max_model_len; a wrong name lists what the server serves", async () => {
  const stub = await stubServer((req, res) => {
    assert.equal(req.url, '/v1/models');
    assert.equal(req.headers.authorization, 'Bearer k1');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'Qwen/Qwen2.5-Coder-7B', object: 'model', max_model_len: 32768 }, { id: 'other' }] }));
  });
  try {
    const ok = await probeServer({ kind: 'openai', url: stub.url, model: 'Qwen/Qwen2.5-Coder-7B', apiKey: 'k1', timeoutMs: 2000 });
    assert.equal(ok.contextTokens, 32768);
    assert.deepEqual(ok.models, ['Qwen/Qwen2.5-Coder-7B', 'other']);
    await assert.rejects(
      probeServer({ kind: 'openai', url: stub.url, model: 'qwen-coder', apiKey: 'k1', timeoutMs: 2000 }),
      /does not serve the model "qwen-coder" \(ghostline\.server\.model\); it serves "Qwen\/Qwen2\.5-Coder-7B", "other"/,
    );
  } finally {
    await stub.close();
  }
});

test('ollama: num_ctx from the Modelfile parameters wins; otherwise the trained context capped at the default', async () => {
  let parameters = 'stop "<|endoftext|>"\nnum_ctx 8192';
  const stub = await stubServer((req, res) => {
    assert.equal(req.url, '/api/show');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ parameters, model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': 32768 } }));
  });
  try {
    assert.equal((await probeServer({ kind: 'ollama', url: stub.url, model: 'qwen2.5-coder:7b', timeoutMs: 2000 })).contextTokens, 8192);
    parameters = '';
    assert.equal((await probeServer({ kind: 'ollama', url: stub.url, model: 'qwen2.5-coder:7b', timeoutMs: 2000 })).contextTokens, 4096);
    assert.deepEqual(stub.requests.at(-1), { model: 'qwen2.5-coder:7b' });
  } finally {
    await stub.close();
  }
});

test('ollama: whether the model fills in the middle, from its capabilities (older servers do not say)', async () => {
  let show: Record<string, unknown> = { capabilities: ['completion', 'insert'] };
  const stub = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ parameters: '', model_info: {}, ...show }));
  });
  try {
    const probe = () => probeServer({ kind: 'ollama', url: stub.url, model: 'm', timeoutMs: 2000 });
    assert.equal((await probe()).fillsInTheMiddle, true);
    show = { capabilities: ['completion', 'tools'] };
    assert.equal((await probe()).fillsInTheMiddle, false);
    show = {};
    assert.equal((await probe()).fillsInTheMiddle, undefined);
  } finally {
    await stub.close();
  }
});

test('a refused key, an unknown model, a page that is not JSON, nothing listening, no answer: one clear message each', async () => {
  const stub = await stubServer((req, res) => {
    if (req.url === '/props') res.writeHead(401).end('invalid api key');
    else if (req.url === '/api/show') res.writeHead(404).end('{"error":"model \\"nope\\" not found"}');
    else if (req.url === '/v1/models') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
  });
  try {
    await assert.rejects(probeServer({ kind: 'llama.cpp', url: stub.url, timeoutMs: 2000 }), /refused the API key.*Set Server Key/);
    await assert.rejects(probeServer({ kind: 'ollama', url: stub.url, model: 'nope', timeoutMs: 2000 }), /404.*no such endpoint or model/);
    await assert.rejects(
      probeServer({ kind: 'openai', url: stub.url, model: 'm', timeoutMs: 2000 }),
      /did not answer with JSON: is ghostline\.server\.url the openai server/,
    );
  } finally {
    await stub.close();
  }
  await assert.rejects(probeServer({ kind: 'llama.cpp', url: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2000 }), /nothing listens there/);
  const silent = await stubServer(() => undefined);
  try {
    await assert.rejects(probeServer({ kind: 'llama.cpp', url: silent.url, timeoutMs: 300 }), /did not answer within 300 ms/);
  } finally {
    await silent.close();
  }
});
