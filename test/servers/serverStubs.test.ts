/**
 * The server generator against local servers that follow (or break) the documented protocols: Ollama's
 * /api/generate NDJSON stream (no real Ollama can run here; the stub follows docs.ollama.com/api), a server
 * that never answers, one that is busy (429 + Retry-After), a cut stream, a refused connection; alternatives
 * (llama.cpp n_cmpl and OpenAI n, streamed interleaved; Ollama's parallel requests) and warm-up requests.
 */
import assert from 'node:assert/strict';
import type * as http from 'node:http';
import { test } from 'node:test';
import type { FirstLine } from '../../src/engine/shared/types';
import { ALTERNATIVE_MIN_TEMPERATURE, ServerGenerator } from '../../src/servers/serverGenerator';
import { retryAfterMs, ServerError } from '../../src/servers/serverErrors';
import { HealthCheckedGenerator } from '../../src/servers/healthCheckedGenerator';
import { ServerHealth } from '../../src/servers/serverHealth';
import { bodyOf, floodServer, refusedUrl, sse, stubServer } from './stubServers';

const infill = { prefix: 'def add(a, b):\n', suffix: '\n', middle: '    return ', extra: [] };

test('ollama: FIM through suffix, options mapped, NDJSON streamed with log-probabilities, stats from the final line', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    // Log-probabilities as Ollama 0.12.11+ streams them (asked with `logprobs: true`), one line per token here.
    const lp = (token: string, logprob: number) => ({ token, logprob, bytes: [...Buffer.from(token)], top_logprobs: [] });
    res.write(`${JSON.stringify({ model: 'm', response: 'a +', done: false, logprobs: [lp('a', -0.25), lp(' +', -0.5)] })}\n`);
    res.write(`${JSON.stringify({ model: 'm', response: ' b', done: false, logprobs: [lp(' b', -0.125)] })}\n`);
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
    // The gate's input: each token's log-probability and where its text ends.
    assert.deepEqual(r.tokenLogprobs, [-0.25, -0.5, -0.125]);
    assert.deepEqual(r.tokenTextEnds, [1, 3, 5]);
    const body = srv.requests[0] as Record<string, unknown>;
    assert.equal(body.logprobs, true);
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

test("a model the server cannot fill in the middle for: Ghostline's own prompt, sent raw, from then on", async () => {
  // Ollama answers a `suffix` for a model without an insert template with 400 and this error (server/images.go).
  const srv = await stubServer((req, res) => {
    const body = bodyOf(req);
    if (body.suffix !== undefined) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: '"llama3:8b" does not support insert' }));
      return;
    }
    res.writeHead(200);
    res.end(`${JSON.stringify({ response: 'a + b', done: false })}\n${JSON.stringify({ response: '', done: true })}\n`);
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: srv.url, model: 'llama3:8b', timeoutMs: 5000 });
    const own = '<fim_prefix>def add(a, b):\n    return <fim_suffix>\n<fim_middle>';
    const r = await gen.generate(own, { maxNewTokens: 16 }, { infill });
    assert.equal(r.text, 'a + b');
    assert.equal(gen.sendsOwnPrompt, true);
    const [first, second] = srv.requests as Record<string, unknown>[];
    assert.equal(first.suffix, '\n');
    assert.equal(second.suffix, undefined);
    assert.equal(second.raw, true);
    assert.equal(second.prompt, own);
    // The next request (and warm-up) goes straight to the own prompt: no second refusal.
    await gen.generate(own, { maxNewTokens: 16 }, { infill });
    await gen.prefill(own, { infill });
    assert.equal(srv.requests.length, 4);
    assert.ok((srv.requests.slice(2) as Record<string, unknown>[]).every((b) => b.raw === true && b.suffix === undefined));
  } finally {
    await srv.close();
  }

  // llama.cpp without FIM tokens in its GGUF: 501 on /infill; the same request then goes to /completion.
  const llama = await stubServer((req, res) => {
    if (req.url === '/infill') {
      res.writeHead(501, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { code: 501, message: 'Infill is not supported by this model: prefix token is missing.', type: 'not_supported_error' } }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sse({ content: 'a + b', stop: false }) + sse({ content: '', stop: true, stop_type: 'eos', timings: { prompt_n: 9, predicted_n: 3 } }));
  });
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: llama.url, timeoutMs: 5000 });
    const r = await gen.generate('def add(a, b):\n    return ', { maxNewTokens: 16 }, { infill });
    assert.equal(r.text, 'a + b');
    assert.deepEqual(llama.paths, ['/infill', '/completion']);
    assert.equal((llama.requests[1] as Record<string, unknown>).prompt, 'def add(a, b):\n    return ');
  } finally {
    await llama.close();
  }

  // Any other 400 is still an error, not a silent change of prompt.
  const other = await stubServer((_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'invalid options' }));
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: other.url, model: 'm', timeoutMs: 5000 });
    await assert.rejects(gen.generate('p', {}, { infill }), /answered 400: .*invalid options/);
    assert.equal(gen.sendsOwnPrompt, false);
    assert.equal(other.requests.length, 1);
  } finally {
    await other.close();
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

test('429 with Retry-After: a clear error, and requests fail fast until then (the health check holds them back)', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(429, { 'retry-after': '30' });
    res.end('slow down');
  });
  try {
    const gen = new HealthCheckedGenerator(new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 }), new ServerHealth());
    await assert.rejects(gen.generate('p', {}), /answered 429: the server is busy, retry after 30 s/);
    await assert.rejects(gen.generate('p', {}), /unavailable .*busy.*trying again in 30 s/);
    assert.equal(srv.requests.length, 1, 'the second request never reached the server');
  } finally {
    await srv.close();
  }
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now()) !== undefined, true);
  assert.equal(retryAfterMs('soon'), undefined);
});

test('401, 404, a cut stream, a line that is not JSON, an endless line, a refused connection: one clear message each', async () => {
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
  // A server that streams one endless line: stopped at the line cap, long before the timeout.
  const flood = await floodServer();
  try {
    const t0 = performance.now();
    await assert.rejects(new ServerGenerator({ kind: 'openai', url: flood.url, timeoutMs: 20_000 }).generate('p', {}), /line longer than/);
    assert.ok(performance.now() - t0 < 10_000);
  } finally {
    await flood.close();
  }
  await assert.rejects(new ServerGenerator({ kind: 'openai', url: await refusedUrl(), timeoutMs: 2000 }).generate('p', {}), /nothing listens there/);
});

/** llama.cpp's streamed pieces: one token of completion `index`, and the end of one. */
const piece = (index: number, content: string, logprob: number) =>
  sse({ index, content, stop: false, completion_probabilities: [{ token: content, logprob }] });
const end = (index: number, stopType = 'eos') =>
  sse({ index, content: '', stop: true, stop_type: stopType, timings: { cache_n: 10, prompt_n: 5, predicted_n: 3, prompt_ms: 1, predicted_ms: 2 } });

test('llama.cpp alternatives: n_cmpl in one request, interleaved completions read apart, each through the stop rules, duplicates once', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(piece(0, 'a', -0.1) + piece(2, 'a', -0.3) + piece(1, 'b', -0.2));
    // Completion 1 reaches the end of its line: the local rule ends it, the rest of it is never read.
    res.write(piece(1, ' - a\n', -0.2) + piece(0, ' + b', -0.1) + piece(2, ' + b', -0.3) + piece(1, 'more', -0.2));
    res.end(end(0) + end(2, 'limit') + end(1));
  });
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    const streamed: string[] = [];
    const r = await gen.generate(
      'unused',
      { temperature: 0.8, seed: 7, numBeams: 3, numReturnSequences: 3, maxLines: 1 },
      { infill, onText: (d) => streamed.push(d) },
    );
    assert.equal(srv.requests.length, 1, 'one request for all three');
    assert.equal(srv.paths[0], '/infill');
    const body = srv.requests[0] as Record<string, unknown>;
    assert.equal(body.n_cmpl, 3);
    assert.equal(body.temperature, 0.8, 'hot enough already: sampled as asked');
    assert.equal(body.seed, 7);
    assert.deepEqual(
      r.sequences.map((q) => [q.text, q.finishReason]),
      [
        ['a + b', 'eos'],
        ['b - a', 'stop'],
      ],
      'the third was the first again',
    );
    assert.equal(r.text, 'a + b');
    assert.deepEqual(r.tokenLogprobs, [-0.1, -0.1]);
    assert.deepEqual(r.sequences[1].tokenLogprobs, [-0.2, -0.2]);
    assert.deepEqual(r.sequences[1].tokenTextEnds, [1, 6]);
    assert.equal(streamed.join(''), 'a + b', 'only the first completion streams to the caller');
    assert.equal(r.stats.promptTokens, 15);
    assert.equal(r.stats.reusedTokens, 10);
    // Three and three from the servers' ends, two read of the completion the client ended.
    assert.equal(r.stats.generatedTokens, 8);
  } finally {
    await srv.close();
  }
});

test('llama.cpp alternatives at temperature 0: the first greedy alone, the others hotter with their own seeds; n_cmpl beyond the slots: one request each, remembered', async () => {
  const srv = await stubServer((req, res) => {
    const body = bodyOf(req);
    if (Number(body.n_cmpl ?? 1) > 1) {
      // llama.cpp with -np 1.
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: 400, message: `Field 'n_cmpl': Value must be between 1 <= value <= 1, but got ${body.n_cmpl}`, type: 'invalid_request_error' },
        }),
      );
      return;
    }
    res.writeHead(200);
    res.end(piece(0, `t${body.temperature} s${body.seed}`, -1) + end(0));
  });
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    const r = await gen.generate('p', { temperature: 0, seed: 5, numBeams: 3, numReturnSequences: 3 });
    assert.deepEqual(
      r.sequences.map((q) => q.text),
      ['t0 s5', `t${ALTERNATIVE_MIN_TEMPERATURE} s6`, `t${ALTERNATIVE_MIN_TEMPERATURE} s7`],
    );
    assert.ok(
      srv.paths.every((p) => p === '/completion'),
      'no infill parts: /completion',
    );
    const asked = (srv.requests as Record<string, unknown>[]).map((b) => `${b.n_cmpl ?? 1} t${b.temperature} s${b.seed}`).sort();
    assert.deepEqual(asked, ['1 t0 s5', '1 t0.6 s6', '1 t0.6 s7', '2 t0.6 s6']);
    srv.requests.length = 0;
    const again = await gen.generate('p', { temperature: 0, seed: 5, numReturnSequences: 3 });
    assert.equal(again.sequences.length, 3);
    assert.equal(srv.requests.length, 3, 'the limit is remembered: no request the server refuses');
    assert.ok((srv.requests as Record<string, unknown>[]).every((b) => b.n_cmpl === undefined));
  } finally {
    await srv.close();
  }
});

test("OpenAI-compatible: the usage trailer after the last choice gives the prompt's token count; one that never comes costs at most a moment", async () => {
  // vLLM with stream_options.include_usage: the finish_reason chunk, then a chunk with no choices and the usage.
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse({ choices: [{ index: 0, text: 'a + b', finish_reason: null }] }));
    res.write(sse({ choices: [{ index: 0, text: '', finish_reason: 'stop' }] }));
    // A write of its own, right after: the grace for it is generous next to this, on any machine.
    setImmediate(() => res.end(`${sse({ choices: [], usage: { prompt_tokens: 321, completion_tokens: 3 } })}data: [DONE]\n\n`));
  });
  try {
    const r = await new ServerGenerator({ kind: 'openai', url: srv.url, model: 'm', timeoutMs: 5000 }).generate('p', { maxNewTokens: 16 });
    assert.equal(r.text, 'a + b');
    assert.equal(r.stats.promptTokens, 321);
  } finally {
    await srv.close();
  }
  // A server that ends the choice and then neither sends usage nor closes: the answer comes anyway, at once.
  const mute = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse({ choices: [{ index: 0, text: 'x = 1', finish_reason: 'stop' }] }));
  });
  try {
    const t0 = performance.now();
    const r = await new ServerGenerator({ kind: 'openai', url: mute.url, model: 'm', timeoutMs: 5000 }).generate('p', { maxNewTokens: 16 });
    assert.equal(r.text, 'x = 1');
    assert.equal(r.finishReason, 'eos');
    // Not held until the request's 5 s timeout, which is what waiting for the trailer would come to.
    assert.ok(performance.now() - t0 < 4000, `answered after ${performance.now() - t0} ms`);
  } finally {
    await mute.close();
  }
});

test('an OpenAI-compatible server that refuses our extra fields gets the minimal request, from then on', async () => {
  // As a strict server answers a field it does not know (the real OpenAI API: 400, "Unrecognized request argument").
  const srv = await stubServer((req, res) => {
    const body = bodyOf(req);
    if ('top_k' in body || 'logprobs' in body || 'stream_options' in body || 'seed' in body) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Unrecognized request argument supplied: top_k', type: 'invalid_request_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sse({ choices: [{ index: 0, text: 'a + b', finish_reason: 'stop' }] })}data: [DONE]\n\n`);
  });
  try {
    const gen = new ServerGenerator({ kind: 'openai', url: srv.url, model: 'm', timeoutMs: 5000 });
    const opts = { maxNewTokens: 16, topK: 8, maxLines: 1, stop: ['<|endoftext|>', '<|fim_pad|>', '<|file_sep|>', '<|im_end|>', '<|fim_prefix|>'] };
    const r = await gen.generate('p', opts);
    assert.equal(r.text, 'a + b');
    assert.equal(r.tokenLogprobs.length, 0, 'no log-probabilities without logprobs: the gate does not score it');
    const minimal = srv.requests[1] as Record<string, unknown>;
    assert.deepEqual((minimal.stop as string[]).length, 4);
    assert.equal((minimal.stop as string[])[0], '\n', 'the newline stop of a one-line request is kept first');
    assert.deepEqual(opts.stop.length, 5, "the caller's options are not changed");
    await gen.generate('p', opts);
    assert.equal(srv.requests.length, 3, 'the next request is minimal at once');
  } finally {
    await srv.close();
  }
  // A 400 that the minimal request does not cure (a prompt too long) is the original error, and nothing is remembered.
  const strict = await stubServer((_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: "This model's maximum context length is 2048 tokens" } }));
  });
  try {
    const gen = new ServerGenerator({ kind: 'openai', url: strict.url, model: 'm', timeoutMs: 5000 });
    await assert.rejects(gen.generate('p', { topK: 8 }), /answered 400: .*maximum context length/);
    assert.equal(strict.requests.length, 2);
    assert.ok('top_k' in (strict.requests[0] as object) && !('top_k' in (strict.requests[1] as object)));
    await assert.rejects(gen.generate('p', { topK: 8 }));
    assert.ok('top_k' in (strict.requests[2] as object), 'the full request again: minimal was not remembered');
  } finally {
    await strict.close();
  }
});

test('OpenAI-compatible alternatives: n in one request, choices read by index, several in one chunk', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse({ choices: [{ index: 1, text: 'y', logprobs: { tokens: ['y'], token_logprobs: [-0.5] }, finish_reason: null }] }));
    res.write(
      sse({
        choices: [
          { index: 0, text: 'x', logprobs: { tokens: ['x'], token_logprobs: [-0.25] }, finish_reason: null },
          { index: 1, text: '!', logprobs: { tokens: ['!'], token_logprobs: [-0.5] }, finish_reason: 'stop' },
        ],
      }),
    );
    res.end(`${sse({ choices: [{ index: 0, text: 'x', logprobs: { tokens: ['x'], token_logprobs: [-0.25] }, finish_reason: 'length' }] })}data: [DONE]\n\n`);
  });
  try {
    const gen = new ServerGenerator({ kind: 'openai', url: srv.url, model: 'm', timeoutMs: 5000 });
    const r = await gen.generate('p', { temperature: 0.7, numBeams: 2, numReturnSequences: 2 });
    assert.equal(srv.requests.length, 1);
    assert.equal((srv.requests[0] as Record<string, unknown>).n, 2);
    assert.deepEqual(
      r.sequences.map((q) => [q.text, q.finishReason, q.tokenLogprobs]),
      [
        ['xx', 'length', [-0.25, -0.25]],
        ['y!', 'eos', [-0.5, -0.5]],
      ],
    );
    // One completion: no n (servers that lack it reject it).
    await gen.generate('p', { temperature: 0.7 });
    assert.equal((srv.requests[1] as Record<string, unknown>).n, undefined);
  } finally {
    await srv.close();
  }
});

test('Ollama alternatives: one request each, in parallel, own seeds; one cancel closes them all', async () => {
  let held: [http.IncomingMessage, http.ServerResponse][] = [];
  const srv = await stubServer((req, res) => {
    held.push([req, res]);
    // Answers only once all three are waiting: sequential requests would time out here.
    if (held.length < 3) return;
    for (const [q, s] of held) {
      const seed = (bodyOf(q).options as Record<string, unknown>).seed;
      s.writeHead(200);
      s.end(`${JSON.stringify({ response: `s${seed}`, done: false })}\n${JSON.stringify({ response: '', done: true, eval_count: 1 })}\n`);
    }
    held = [];
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: srv.url, model: 'm', timeoutMs: 3000 });
    const r = await gen.generate('p', { temperature: 0.2, seed: 1, numBeams: 3, numReturnSequences: 3 }, { infill });
    assert.deepEqual(
      r.sequences.map((q) => q.text),
      ['s1', 's2', 's3'],
    );
    const options = (srv.requests as Record<string, Record<string, unknown>>[]).map((b) => b.options).sort((a, b) => Number(a.seed) - Number(b.seed));
    assert.deepEqual(
      options.map((o) => [o.seed, o.temperature]),
      [
        [1, 0.2],
        [2, ALTERNATIVE_MIN_TEMPERATURE],
        [3, ALTERNATIVE_MIN_TEMPERATURE],
      ],
    );
    assert.equal(r.stats.generatedTokens, 3);
  } finally {
    await srv.close();
  }

  let closed = 0;
  let waiting: [http.IncomingMessage, http.ServerResponse][] = [];
  const endless = await stubServer((req, res) => {
    req.socket.on('close', () => closed++);
    waiting.push([req, res]);
    if (waiting.length < 3) return;
    // All three are open: each streams a piece and never ends.
    for (const [, s] of waiting) {
      s.writeHead(200);
      s.write(`${JSON.stringify({ response: 'a', done: false })}\n`);
    }
    waiting = [];
  });
  try {
    const gen = new ServerGenerator({ kind: 'ollama', url: endless.url, timeoutMs: 5000 });
    const ac = new AbortController();
    const r = await gen.generate('p', { temperature: 0.8, numReturnSequences: 3 }, { infill, signal: ac.signal, onText: () => ac.abort() });
    assert.equal(r.finishReason, 'cancelled');
    const until = Date.now() + 2000;
    while (closed < 3 && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
    assert.equal(endless.requests.length, 3);
    assert.equal(closed, 3, 'every request was closed');
  } finally {
    await endless.close();
  }
});

test('warm: the prompt into the cache and nothing generated: llama.cpp n_predict 0, OpenAI max_tokens 1, Ollama num_predict 1', async () => {
  const srv = await stubServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url === '/api/generate' ? { response: 'x', done: true } : { content: 'x', stop: true, choices: [{ text: 'x' }] }));
  });
  try {
    const llama = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    assert.equal(await llama.prefill('unused', { infill, onText: () => assert.fail('nothing streams') }), undefined);
    assert.equal(srv.paths[0], '/infill');
    assert.deepEqual(srv.requests[0], {
      input_prefix: infill.prefix,
      input_suffix: infill.suffix,
      input_extra: [],
      prompt: infill.middle,
      n_predict: 0,
      cache_prompt: true,
      stream: false,
    });
    await llama.prefill('<fim_prefix>a<fim_suffix>b<fim_middle>');
    assert.equal(srv.paths[1], '/completion');
    assert.deepEqual(srv.requests[1], { prompt: '<fim_prefix>a<fim_suffix>b<fim_middle>', n_predict: 0, cache_prompt: true, stream: false });

    await new ServerGenerator({ kind: 'openai', url: srv.url, model: 'm', timeoutMs: 5000 }).prefill('P');
    assert.equal(srv.paths[2], '/v1/completions');
    assert.deepEqual(srv.requests[2], { model: 'm', prompt: 'P', max_tokens: 1, temperature: 0, stream: false });

    await new ServerGenerator({ kind: 'ollama', url: srv.url, model: 'm', timeoutMs: 5000 }).prefill('P', { infill });
    assert.equal(srv.paths[3], '/api/generate');
    assert.deepEqual(srv.requests[3], { model: 'm', prompt: infill.prefix + infill.middle, suffix: infill.suffix, stream: false, options: { num_predict: 1 } });

    const ac = new AbortController();
    ac.abort();
    await llama.prefill('p', { signal: ac.signal });
    assert.equal(srv.requests.length, 4, 'cancelled: no request');
  } finally {
    await srv.close();
  }
});

test('warm fails as generate does: the same ServerError', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(503, { 'retry-after': '7' });
    res.end('loading model');
  });
  try {
    const gen = new HealthCheckedGenerator(new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 }), new ServerHealth());
    const busy = (e: unknown) => e instanceof ServerError && e.retryable && /answered 503: the server is busy, retry after 7 s/.test(e.message);
    await assert.rejects(gen.prefill('p', { infill }), busy);
    await assert.rejects(gen.generate('p', {}), (e: unknown) => e instanceof ServerError && /unavailable .*busy.*trying again in 7 s/.test(e.message));
    assert.equal(srv.requests.length, 1, "the warm-up's Retry-After holds the completion back too");
  } finally {
    await srv.close();
  }
  // A server that never stops answering: warm's answer is read and discarded up to a cap (1 MiB), so a flood
  // ends with a protocol error long before the timeout, whatever the protocol.
  const flood = await floodServer();
  try {
    for (const kind of ['llama.cpp', 'openai', 'ollama'] as const) {
      await assert.rejects(
        new ServerGenerator({ kind, url: flood.url, model: 'm', timeoutMs: 60_000 }).prefill('p', { infill }),
        /the server sent more than 1048576 bytes in answer to a warm-up/,
        kind,
      );
    }
    assert.deepEqual(flood.paths, ['/infill', '/v1/completions', '/api/generate'], 'each warm-up reached the server');
  } finally {
    await flood.close();
  }
  await assert.rejects(new ServerGenerator({ kind: 'ollama', url: await refusedUrl(), timeoutMs: 2000 }).prefill('p'), /nothing listens there/);
});

test('a server that ignores max_tokens is cut off by the client at a bound on characters per token', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = `data: ${JSON.stringify({ choices: [{ index: 0, text: 'ab', finish_reason: null }] })}\n\n`;
    const pump = () => {
      for (let i = 0; i < 200 && !res.destroyed; i++) res.write(piece);
      if (!res.destroyed) setTimeout(pump, 1);
    };
    res.on('close', () => res.destroy());
    pump();
  });
  try {
    const r = await new ServerGenerator({ kind: 'openai', url: srv.url, timeoutMs: 20_000 }).generate('p', { maxNewTokens: 4, maxLines: 0 });
    assert.equal(r.finishReason, 'length');
    assert.ok(r.text.length > 0 && r.text.length <= 4 * 64 + 2, String(r.text.length));
  } finally {
    await srv.close();
  }
});

test('with partialLineMs, a first line still streaming is reported as far as a word end, as the local engine does', async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const tok = (content: string, logprob: number) => sse({ content, stop: false, completion_probabilities: [{ token: content, logprob }] });
    // Later than partialLineMs (1 ms) after the request, whatever the machine.
    setTimeout(() => {
      res.write(tok('x = compute(prices', -0.5));
      res.write(tok(', disc', -0.25));
      res.write(tok('ount)\n', -0.125));
      res.end(sse({ content: '', stop: true, stop_type: 'eos' }));
    }, 20);
  });
  try {
    const lines: FirstLine[] = [];
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    const r = await gen.generate('p', { maxLines: 1, stop: [], partialLineMs: 1 }, { onFirstLine: (l) => lines.push(l) });
    assert.equal(r.text, 'x = compute(prices, discount)');
    // "prices" might go on in the next token, so nothing shows until ", disc" ends it; "disc" is unfinished, so the
    // line is cut at the end of the first token.
    assert.deepEqual(lines, [{ text: 'x = compute(prices', tokenLogprobs: [-0.5], tokenTextEnds: [18], partial: true }]);
  } finally {
    await srv.close();
  }
});

test("a block's first line is reported once, as it streams, with its tokens' log-probabilities", async () => {
  const srv = await stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const tok = (content: string, logprob: number) => sse({ content, stop: false, completion_probabilities: [{ token: content, logprob }] });
    res.write(tok('\n    x', -0.5));
    res.write(tok(' = 1', -0.25));
    res.write(tok('\n', -0.125));
    res.write(tok('    y', -1));
    res.end(sse({ content: '', stop: true, stop_type: 'eos' }));
  });
  try {
    const lines: { text: string; tokenLogprobs: number[] }[] = [];
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    const r = await gen.generate('p', { maxLines: 0, stop: [] }, { onFirstLine: (l) => lines.push(l) });
    assert.equal(r.text, '\n    x = 1\n    y');
    assert.deepEqual(lines, [{ text: '\n    x = 1', tokenLogprobs: [-0.5, -0.25, -0.125], tokenTextEnds: [6, 10, 11] }]);
  } finally {
    await srv.close();
  }
});
