// `ghostline next-edit`: the prompt the editor would build from a history file (byte for byte the Sweep layout),
// and one clear message with exit code 2 for each kind of bad input, a model that is not a next-edit model
// included (the bundled model's tokenizer has no <|file_sep|>).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-next-edit-cli-'));
const AFTER = 'def area(width, depth):\n    return width * height\n';
fs.mkdirSync(path.join(ws, 'geo'));
fs.writeFileSync(path.join(ws, 'geo', 'shapes.py'), AFTER);
const history = path.join(ws, 'history.json');
fs.writeFileSync(history, JSON.stringify([{ offset: 16, removedText: 'height', insertedText: 'depth' }]));

const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'next-edit', '--workspace', ws, ...args], { encoding: 'utf8', cwd: ws });

test('--prompt-only: the Sweep prompt for the file after the history, paths with / and the edit as a block', () => {
  const r = run('--file', path.join('geo', 'shapes.py'), '--history', history, '--prompt-only');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.startsWith('<|file_sep|>geo/shapes.py.diff\noriginal:\n'), r.stdout);
  assert.ok(r.stdout.includes('original:\ndef area(width, height):'), r.stdout);
  assert.ok(r.stdout.includes('updated:\ndef area(width, depth):'), r.stdout);
  assert.ok(r.stdout.includes('<|file_sep|>original/geo/shapes.py\ndef area(width, height):\n    return width * height\n'), r.stdout);
  assert.ok(r.stdout.includes('<|file_sep|>current/geo/shapes.py\ndef area(width, depth):\n    return width * height\n'), r.stdout);
  assert.ok(r.stdout.endsWith('<|file_sep|>updated/geo/shapes.py\n'), r.stdout);
});

test('bad input: one message and exit code 2 each', () => {
  const mismatch = path.join(ws, 'mismatch.json');
  fs.writeFileSync(mismatch, JSON.stringify([{ offset: 0, removedText: 'x', insertedText: 'nothing like this' }]));
  const notJson = path.join(ws, 'bad.json');
  fs.writeFileSync(notJson, '{ edits: ');
  const binary = path.join(ws, 'blob.bin');
  fs.writeFileSync(binary, Buffer.from([1, 0, 2, 0, 3]));
  const outside = path.join(os.tmpdir(), 'ghostline-outside.py');
  fs.writeFileSync(outside, 'x = 1\n');
  const cases: [string[], RegExp][] = [
    [['--file', 'geo/shapes.py', '--history', mismatch, '--prompt-only'], /edit 1 does not match the file/],
    [['--file', 'geo/shapes.py', '--history', notJson, '--prompt-only'], /bad\.json: .*JSON/],
    [['--file', binary, '--history', history, '--prompt-only'], /is a binary file/],
    [['--file', outside, '--history', history, '--prompt-only'], /is outside the workspace/],
    [['--file', 'geo/shapes.py', '--history', history], /needs --model/],
    [
      ['--file', 'geo/shapes.py', '--history', history, '--model', path.join(ROOT, 'models', 'ghostline-code-small'), '--threads', '1', '--device', 'cpu'],
      /is not a next-edit model: its tokenizer has no <\|file_sep\|> token/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('ghostline:')).length,
      1,
      r.stderr,
    );
  }
});

test('a GGUF converted by `ghostline convert` runs as a next-edit model: its rebuilt tokenizer has <|file_sep|>, the model answers', () => {
  // The qwen2 fixture as Q8_0 GGUF (random weights: what it proposes is noise; that it loads and answers is the point).
  const model = path.join(ws, 'converted');
  const conv = spawnSync(process.execPath, [CLI, 'convert', '--from', path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf'), '--out', model], {
    encoding: 'utf8',
  });
  assert.equal(conv.status, 0, conv.stderr);
  const r = run('--file', 'geo/shapes.py', '--history', history, '--model', model, '--threads', '1', '--device', 'cpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  const outcome = JSON.parse(r.stdout) as { kind: string };
  assert.ok(['edits', 'none', 'dropped'].includes(outcome.kind), r.stdout); // noise is dropped by the checks
  assert.ok(!/is not a next-edit model/.test(r.stderr), r.stderr);
});
