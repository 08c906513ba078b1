import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT, TINY, loadReference } from '../helpers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const ref = loadReference();

test('generate --json follows the contract', () => {
  const r = spawnSync(process.execPath, [CLI, 'generate', '--model', TINY, '--prompt', ref.prompt, '--max-new-tokens', '6', '--json', '--threads', '1'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  for (const key of [
    'id',
    'text',
    'finish_reason',
    'prompt_tokens',
    'reused_tokens',
    'prefill_tokens',
    'generated_tokens',
    'prefill_ms',
    'decode_ms',
    'total_ms',
  ]) {
    assert.ok(key in out, `missing ${key}`);
  }
  assert.equal(out.prompt_tokens, ref.prompt_ids.length);
  assert.ok(['eos', 'length'].includes(out.finish_reason));
});

test('generate refuses a bad option with a clear message', () => {
  const r = spawnSync(process.execPath, [CLI, 'generate', '--model', TINY, '--prompt', 'x', '--top-k', 'lots'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--top-k must be a number, got "lots"/);
});

test('serve-stdio: one engine and one KV cache for the stream; bad requests get errors and the stream goes on', async () => {
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--model', TINY, '--threads', '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [
    { id: 'a', prompt: ref.prompt, max_new_tokens: 4 },
    { id: 'b', prompt: `${ref.prompt} 2`, max_new_tokens: 4 },
    'not json',
    { id: 'c', prompt: ref.prompt, top_p: 7 },
    { id: 'd', prompt: ref.prompt, bogus: 1 },
    { id: 'e', prompt: `${ref.prompt} 2:`, max_new_tokens: 3, temperature: 0.7, top_k: 5, seed: 1, stop: ['\n'] },
  ];
  child.stdin.end(`${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0);
  const res = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(res.length, 6);
  assert.equal(res[0].id, 'a');
  assert.equal(res[0].reused_tokens, 0);
  assert.ok(res[1].reused_tokens >= ref.prompt_ids.length - 1, `reused ${res[1].reused_tokens}`);
  assert.ok(res[1].prefill_tokens <= 3);
  assert.equal(res[2].finish_reason, 'error');
  assert.match(res[3].error, /top_p must be between 0 and 1/);
  assert.equal(res[3].id, 'c');
  assert.match(res[4].error, /unknown request field "bogus"/);
  assert.ok(['eos', 'length', 'stop'].includes(res[5].finish_reason));
});

test('every command refuses an option it does not know, as serve-stdio refuses unknown fields', () => {
  for (const argv of [
    ['generate', '--model', TINY, '--prompt', 'x', '--temprature', '0.5'],
    ['generate', '--model', TINY, '--prompt', 'x', '--progress-json'],
    ['serve-stdio', '--model', TINY, '--max-new-tokens', '4'],
    ['convert', '--from', 'a', '--out', 'b', '--quantize', 'q4'],
  ]) {
    const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', input: '' });
    assert.equal(r.status, 1, argv.join(' '));
    assert.match(r.stderr, new RegExp(`${argv[0]} does not take --${argv.at(-2)!.startsWith('--') ? argv.at(-2)!.slice(2) : argv.at(-1)!.slice(2)}`));
  }
});

test('serve-stdio: prototype keys are unknown fields by name, a capped max_new_tokens and a huge raw prompt say so', async () => {
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--model', TINY, '--threads', '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const huge = 'x = 1\n'.repeat(2_000_000); // 12 MB on one request line
  const lines = [
    '{"id": "p", "prompt": "x", "__proto__": {"a": 1}}',
    '{"id": "c", "prompt": "x", "constructor": 1}',
    JSON.stringify({ id: 'm', prompt: ref.prompt, max_new_tokens: 4000 }),
    JSON.stringify({ id: 'h', prompt: huge, max_new_tokens: 2 }),
    JSON.stringify({ id: 'f', prefix: 'def f(x):\n    return x', suffix: '', constructor: 1 }),
  ];
  child.stdin.end(`${lines.join('\n')}\n`);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  assert.equal(await new Promise((r) => child.on('exit', r)), 0);
  const res = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(res[0].error, 'unknown request field "__proto__"');
  assert.equal(res[1].error, 'unknown request field "constructor"');
  assert.ok(
    res[2].notices.some((n: string) => /max_new_tokens 4000 was capped to 512, half the model's context of 1024 tokens/.test(n)),
    JSON.stringify(res[2]),
  );
  assert.ok(res[2].generated_tokens <= 512);
  // The 12 MB prompt is cut to a multiple of the context before tokenizing; the model sees its end.
  assert.notEqual(res[3].finish_reason, 'error', res[3].error);
  assert.ok(res[3].notices.some((n: string) => /characters were dropped before tokenizing/.test(n)));
  assert.ok(res[3].prompt_tokens <= 1024);
  assert.equal(res[4].error, 'unknown request field "constructor"');
});

test('generate --help names a flag for every decode option, and the flags reach the engine', async () => {
  const { DECODE_TABLE, kebabCase } = await import('../../src/engine/shared/decodeTable');
  const help = spawnSync(process.execPath, [CLI, 'generate', '--help'], { encoding: 'utf8' }).stdout;
  for (const row of DECODE_TABLE) assert.ok(help.includes(`${kebabCase(row.key)}`), `--${kebabCase(row.key)} in --help`);
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'generate',
      '--model',
      TINY,
      '--prompt',
      ref.prompt,
      '--max-new-tokens',
      '3',
      '--no-stop-on-special-tokens',
      '--repetition-window',
      '8',
      '--json',
      '--threads',
      '1',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).generated_tokens, 3);
  const bad = spawnSync(process.execPath, [CLI, 'generate', '--model', TINY, '--prompt', 'x', '--repetition-window', '-1'], { encoding: 'utf8' });
  assert.match(bad.stderr, /--repetition-window must be between 0 and 100000, got -1/);
});

test('serve-stdio prefix requests run the editor pipeline: filtered text, stats, cache reuse, cursor-line mode', async () => {
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--model', TINY, '--threads', '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const prefix = 'def add(a, b):\n    return a';
  const lines = [
    { id: 1, prefix, suffix: '\n\nprint(add(1, 2))\n', language: 'python', path: 'a.py' },
    { id: 2, prefix, suffix: '\n\nprint(add(1, 2))\n', language: 'python', path: 'a.py' },
    { id: 3, prefix, suffix: '\n\nprint(add(1, 2))\n#', language: 'python', path: 'a.py' },
    { id: 4, prefix: 'x = foo(', suffix: ')\n', language: 'python', path: 'a.py' },
  ];
  child.stdin.end(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  assert.equal(await new Promise((r) => child.on('exit', r)), 0);
  const [a, b, c, d] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  for (const r of [a, b, c, d]) {
    for (const key of ['id', 'text', 'raw_text', 'items', 'source', 'mode', 'finish_reason', 'prompt_tokens', 'total_ms'])
      assert.ok(key in r, `${key} in ${JSON.stringify(r)}`);
  }
  assert.equal(a.source, 'model');
  assert.ok(a.prompt_tokens > 10);
  // The same context again: the result cache answers (or nothing was worth showing, and the model runs again).
  assert.equal(b.source, a.items.length > 0 ? 'cache' : 'model');
  // One more character at the end of the suffix: another context for the result cache, but the KV cache
  // holds everything before it (the prompt runs prefix, suffix, then the cursor line).
  assert.equal(c.source, 'model');
  assert.ok(
    c.reused_tokens >= c.prompt_tokens - 10 && c.prefill_tokens <= 10,
    `reused ${c.reused_tokens} of ${c.prompt_tokens}, prefilled ${c.prefill_tokens}`,
  );
  assert.equal(d.mode, 'line');
  assert.ok(!String(d.text).includes('\n'), 'with code right of the cursor a suggestion is one line');
});

test('serve-stdio with the shipped model: a guess is held back with its confidence, an explicit request shows it, a sure completion passes', async () => {
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--threads', '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const notes = '"""Notes."""\n\n\n# TODO: ask Maria about the';
  const lines = [
    { id: 1, prefix: notes, suffix: '', language: 'python', path: 'notes.py' },
    { id: 2, prefix: notes, suffix: '', language: 'python', path: 'notes.py', explicit: true },
    {
      id: 3,
      prefix: 'import os\n\n\ndef fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - ',
      suffix: '\n',
      language: 'python',
      path: 'f.py',
    },
  ];
  child.stdin.end(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  assert.equal(await new Promise((r) => child.on('exit', r)), 0);
  const [guess, asked, sure] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(guess.finish_reason, 'gated', JSON.stringify(guess));
  assert.equal(guess.text, '');
  assert.ok(guess.raw_text.length > 0 && guess.confidence < 0.1, JSON.stringify(guess));
  assert.equal(asked.finish_reason, 'ok', 'Alt+\\ (explicit) bypasses the gate');
  assert.ok(asked.text.length > 0);
  assert.equal(sure.finish_reason, 'ok', JSON.stringify(sure));
  assert.ok(sure.text.length > 0);
  assert.ok(sure.confidence >= 0.1);
  assert.ok(sure.fill > 0 && sure.fill < 1);
});
