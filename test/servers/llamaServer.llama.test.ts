/**
 * The server generator against a real llama.cpp server (built once from the source inside node-llama-cpp,
 * scripts/llama-server.js) serving the default model as GGUF on 127.0.0.1: /infill through the editor's
 * pipeline, OpenAI-compatible /v1/completions, KV reuse across keystrokes, cancel freeing the slot,
 * alternatives (n_cmpl) on an explicit trigger, a warm-up filling the slot's cache, a loop ending the stream, and
 * serve-stdio --backend.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { fimTemplateForFamily } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { ROOT } from '../helpers';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: (o?: { parallel?: number }) => Promise<{ url: string; stop: () => Promise<void> }>;
};

let server: { url: string; stop: () => Promise<void> };
before(async () => {
  server = await startLlamaServer({ parallel: 2 });
});
after(async () => server?.stop());

const template = fimTemplateForFamily('starcoder'); // the default model's FIM tokens
const settings = { ...defaultCompletionSettings(), prefetch: false };
const request = (before: string, after: string) => {
  const text = before + after;
  return { doc: textSource(text), cursor: positionAt(text, before.length), languageId: 'python', path: 'a.py', explicit: false };
};

test('llama.cpp /infill through the editor pipeline: a suggestion, server stats, and the prompt cached across keystrokes', async () => {
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000 });
  const svc = new CompletionService(
    gen,
    () => template,
    () => settings,
    () => ({ contextTokens: 512 }),
  );
  const head = 'import os\n\n\ndef add(a, b):\n    """Return the sum."""\n    return a';
  const first = await svc.complete(request(head, '\n\n\nprint(add(1, 2))\n'));
  assert.equal(first.source, 'model');
  assert.equal(typeof first.raw, 'string');
  assert.ok(first.stats && first.stats.promptTokens > 10, JSON.stringify(first.stats));
  // One more character typed: the server's slot keeps the prompt, so almost nothing is processed again.
  const second = await svc.complete(request(`${head} `, '\n\n\nprint(add(1, 2))\n'));
  assert.ok(second.stats, 'the model ran');
  assert.ok(second.stats!.reusedTokens > second.stats!.promptTokens / 2, `reused ${second.stats!.reusedTokens} of ${second.stats!.promptTokens}`);
});

test('OpenAI-compatible /v1/completions with our FIM prompt as text: streamed text and token log-probabilities', async () => {
  const gen = new ServerGenerator({ kind: 'openai', url: server.url, model: 'default', timeoutMs: 20_000 });
  const prompt = '<fim_prefix>def add(a, b):\n    return a<fim_suffix>\n<fim_middle>';
  let streamed = '';
  const r = await gen.generate(prompt, { maxNewTokens: 8, temperature: 0, stop: ['<|endoftext|>'] }, { onText: (d) => (streamed += d) });
  assert.equal(streamed, r.text);
  assert.ok(['eos', 'length', 'stop'].includes(r.finishReason), r.finishReason);
  assert.ok(r.stats.generatedTokens > 0 || r.text.length > 0);
  for (const lp of r.tokenLogprobs) assert.ok(lp <= 0 && Number.isFinite(lp));
});

test('cancelling a long generation closes the request and frees the server slot', async () => {
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000 });
  const ac = new AbortController();
  let chunks = 0;
  const r = await gen.generate(
    'def long_function():\n',
    { maxNewTokens: 400, maxLines: 0, stop: [] },
    {
      signal: ac.signal,
      onText: () => {
        if (++chunks === 3) ac.abort();
      },
    },
  );
  assert.equal(r.finishReason, 'cancelled');
  const end = Date.now() + 5000;
  let busy = -1;
  while (Date.now() < end) {
    const slots = (await (await fetch(`${server.url}/slots`)).json()) as { is_processing?: boolean; state?: number }[];
    busy = slots.filter((s) => s.is_processing === true || s.state === 1).length;
    if (busy === 0) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(busy, 0, 'every slot is idle again');
});

test('a loop ends the server stream as it ends a local generation (stopOnLoop): the same text, cut short', async () => {
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000 });
  // The default model loops on this line (test/engine/loopStop.test.ts) until max_new_tokens.
  const prompt = 'const rows = [[], [], [], [],';
  const opts = { maxNewTokens: 96, maxLines: 1, temperature: 0, stop: [] };
  const whole = await gen.generate(prompt, opts);
  const stopped = await gen.generate(prompt, { ...opts, stopOnLoop: true });
  assert.equal(whole.finishReason, 'length', JSON.stringify(whole.text));
  assert.equal(stopped.finishReason, 'loop', JSON.stringify(stopped.text));
  assert.ok(whole.text.startsWith(stopped.text) && stopped.text.length < whole.text.length / 2, JSON.stringify(stopped.text));
});

/** The server's HTTP client, recording what was asked of it. */
const recordingFetch = (asked: { path: string; body: Record<string, unknown> }[]): typeof fetch =>
  ((url: string | URL, init?: RequestInit) => {
    asked.push({ path: new URL(String(url)).pathname, body: JSON.parse(String(init?.body)) });
    return fetch(url, init);
  }) as typeof fetch;

test('an explicit trigger through the pipeline: distinct alternatives from /infill with n_cmpl', async () => {
  const asked: { path: string; body: Record<string, unknown> }[] = [];
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000, fetch: recordingFetch(asked) });
  const svc = new CompletionService(
    gen,
    () => template,
    () => ({ ...settings, alternatives: 3 }),
    () => ({ contextTokens: 512 }),
  );
  const r = await svc.complete({ ...request('import os\n\n\ndef read_config(path):\n    ', '\n'), explicit: true });
  assert.equal(r.source, 'model');
  assert.ok(r.items.length > 1, `alternatives: ${JSON.stringify(r.items)}`);
  assert.equal(new Set(r.items).size, r.items.length);
  // The first as the preset samples it; the two others hotter, in one request the server runs in two slots.
  assert.deepEqual(
    asked.map((a) => [a.path, a.body.n_cmpl ?? 1]),
    [
      ['/infill', 1],
      ['/infill', 2],
    ],
  );
});

test('warm() fills the slot: the completion for the same request then reuses almost all of the prompt', async () => {
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000 });
  // Few tokens: the server ends each completion itself and reports its timings (cache_n).
  const short = { ...settings, preset: { ...settings.preset, maxNewTokens: 4 } };
  const svc = new CompletionService(
    gen,
    () => template,
    () => short,
    () => ({ contextTokens: 512 }),
  );
  const tail = '\n\n\nif __name__ == "__main__":\n    main(sys.argv)\n';
  // Without a warm-up, a new file shares little with what the slots hold.
  // Requests in the middle of a line (one-line answers, with their timings; a block's first line comes before them).
  const cold = await svc.complete(request('import sys\n\n\ndef parse_args(argv):\n    """Parse the command line."""\n    return ', tail));
  assert.ok(cold.stats && cold.stats.promptTokens > 20, JSON.stringify(cold.stats));
  assert.ok(cold.stats.reusedTokens < cold.stats.promptTokens / 2, `cold: reused ${cold.stats.reusedTokens} of ${cold.stats.promptTokens}`);
  const req = request('import json\n\n\ndef load_settings(text):\n    """Settings from JSON text."""\n    return ', tail);
  assert.equal(await svc.prefill(req), true);
  const warm = await svc.complete(req);
  assert.equal(warm.source, 'model');
  assert.ok(warm.stats && warm.stats.promptTokens > 20, JSON.stringify(warm.stats));
  assert.ok(warm.stats.reusedTokens >= warm.stats.promptTokens * 0.9, `warm: reused ${warm.stats.reusedTokens} of ${warm.stats.promptTokens}`);
});

test('serve-stdio --backend llama.cpp connects as the editor does and runs the same pipeline against the server', async () => {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  // No --server-fim: the connection finds the format, the token ids, the context and the calibration itself.
  const child = spawn(process.execPath, [cli, 'serve-stdio', '--backend', 'llama.cpp', '--server-url', server.url], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(`${JSON.stringify({ id: 1, prefix: 'def add(a, b):\n    return a', suffix: '\n', language: 'python', path: 'a.py' })}\n`);
  let out = '';
  let log = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (log += d));
  assert.equal(await new Promise((r) => child.on('exit', r)), 0, log);
  // This GGUF has the model's vocabulary and splits text its own way: ids, in the model's own FIM format, with
  // the model's calibration, and the context the server's slots have (not an assumed 8,192).
  const ctx = Number(/context (\d+) tokens/.exec(log)?.[1]);
  const props = (await (await fetch(`${server.url}/props`)).json()) as { default_generation_settings: { n_ctx: number } };
  assert.equal(ctx, props.default_generation_settings.n_ctx, log);
  assert.match(log, /FIM starcoder as token ids, calibration .*the server runs the local model's tokens/);
  const r = JSON.parse(out.trim());
  assert.equal(r.id, 1);
  assert.equal(r.source, 'model');
  assert.ok(r.prompt_tokens > 5, out);
  const bad = spawn(process.execPath, [cli, 'serve-stdio', '--backend', 'vllm', '--server-url', server.url], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  bad.stderr.on('data', (d) => (err += d));
  bad.stdin.end();
  assert.notEqual(await new Promise((r) => bad.on('exit', r)), 0);
  assert.match(err, /--backend must be local, llama.cpp, openai, ollama/);
});
