/**
 * The server generator against a real llama.cpp server (built once from the source inside node-llama-cpp,
 * scripts/llama-server.js) serving the default model as GGUF on 127.0.0.1: /infill through the editor's
 * pipeline, OpenAI-compatible /v1/completions, KV reuse across keystrokes, cancel freeing the slot, and
 * serve-stdio --backend.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { ServerGenerator } from '../../src/backends/serverGenerator';
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

test('serve-stdio --backend llama.cpp runs the same pipeline against the server', async () => {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  const child = spawn(process.execPath, [cli, 'serve-stdio', '--backend', 'llama.cpp', '--server-url', server.url, '--server-fim', 'starcoder'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(`${JSON.stringify({ id: 1, prefix: 'def add(a, b):\n    return a', suffix: '\n', language: 'python', path: 'a.py' })}\n`);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  assert.equal(await new Promise((r) => child.on('exit', r)), 0);
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
