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
  for (const key of ['id', 'text', 'finish_reason', 'prompt_tokens', 'reused_tokens', 'prefill_tokens', 'generated_tokens', 'prefill_ms', 'decode_ms', 'total_ms']) {
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
    { id: 'b', prompt: ref.prompt + ' 2', max_new_tokens: 4 },
    'not json',
    { id: 'c', prompt: ref.prompt, top_p: 7 },
    { id: 'd', prompt: ref.prompt, bogus: 1 },
    { id: 'e', prompt: ref.prompt + ' 2:', max_new_tokens: 3, temperature: 0.7, top_k: 5, seed: 1, stop: ['\n'] },
  ];
  child.stdin.end(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0);
  const res = out.trim().split('\n').map((l) => JSON.parse(l));
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
