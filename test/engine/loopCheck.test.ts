import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endsInLongLoop, LOOP_STOP_CHARS, repeatsStatementAbove, thirdIdenticalLine } from '../../src/engine/shared/loopCheck';
import { TextStopper } from '../../src/engine/shared/textStopper';

// Lines the default model wrote on the typing replay (bench:pause-latency), each cut off at max_new_tokens.
const LOOPS = [
  'e(s, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0, t0',
  'eq, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx, ctx',
  "te' | 'gate' | 'gate' | 'gate' | 'gate' | 'gate' | 'gate' | 'gate' | 'gat",
  'etionOutcome, [], [], [], [], [], [], [], [], [], [], [], [], [], [], [], []',
  'son-only-only-only-only-only-only-only-only-only-only-only-only-only-on',
];

test('a line looping on for LOOP_STOP_CHARS characters ends in a long loop (the last copy may be cut short)', () => {
  for (const line of LOOPS) assert.equal(endsInLongLoop(line), true, line);
});

test('rulers, short runs of data and ordinary code are no long loop', () => {
  for (const line of [
    `# ${'-'.repeat(70)}`,
    `// ${'='.repeat(60)}`,
    '    data = [0, 0, 0, 0, 0, 0, 0, 0]',
    'const result = await Promise.all(files.map((f) => fs.promises.readFile(f, "utf8")));',
    'e(s, t0, t0, t0, t0, t0',
    `${'x'.repeat(LOOP_STOP_CHARS - 1)}`,
  ])
    assert.equal(endsInLongLoop(line), false, line);
});

test('a statement repeated on the next line, and three identical short lines, as repetitionGuard cuts them', () => {
  assert.equal(repeatsStatementAbove(['', '    x = f(a)', 'x = f(a)'], 2), true);
  assert.equal(repeatsStatementAbove(['', '}', '}'], 2), false);
  assert.equal(thirdIdenticalLine(['  }', '  }', '  }'], 2), true);
  assert.equal(thirdIdenticalLine(['  }', '}', '  }'], 2), false);
});

const opts = (stopOnLoop: boolean) => ({ stop: [], maxLines: 0, timeBudgetMs: 0, stopOnLoop });

test('stopOnLoop: the stopper ends a looping line with finish reason loop, once it has run LOOP_STOP_CHARS', () => {
  const s = new TextStopper(opts(true), 0);
  let out = '';
  let pushed = 0;
  for (const piece of ['e(s', ',', ' t0', ...Array.from({ length: 40 }, () => [',', ' t0']).flat()]) {
    if (s.finishReason) break;
    out += s.push(piece, 0);
    pushed++;
  }
  assert.equal(s.finishReason, 'loop');
  assert.ok(pushed < 40, `stopped after ${pushed} pieces`);
  assert.ok(out.length >= LOOP_STOP_CHARS);
  const off = new TextStopper(opts(false), 0);
  for (let i = 0; i < 40; i++) off.push(', t0', 0);
  assert.equal(off.finishReason, null, 'off by default');
});

test('stopOnLoop: the stopper ends a block once a completed line repeats the statement above it', () => {
  const s = new TextStopper(opts(true), 0);
  s.push('\n    const template = t.source;\n', 0);
  assert.equal(s.finishReason, null);
  s.push('    const template = t.source', 0);
  assert.equal(s.finishReason, null, 'not before the line is complete');
  s.push('.text;\n    const', 0);
  assert.equal(s.finishReason, null, 'a different statement above');
  s.push(' template = t.source.text;\n', 0);
  assert.equal(s.finishReason, 'loop');
});
