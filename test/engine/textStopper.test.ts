import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveDecodeOptions } from '../../src/engine/shared/decodeOptions';
import { TextStopper } from '../../src/engine/shared/textStopper';

const opts = (o: Partial<{ stop: string[]; maxLines: number; timeBudgetMs: number }>) => ({ stop: [], maxLines: 0, timeBudgetMs: 0, ...o });

test('a stop string split across pieces is found, and none of it is released', () => {
  const s = new TextStopper(opts({ stop: ['</end>'] }), 0);
  let out = '';
  for (const piece of ['ab', 'c<', '/e', 'n', 'd>tail']) out += s.push(piece, 0);
  assert.equal(out, 'abc');
  assert.equal(s.finishReason, 'stop');
});

test('held-back text is released once it cannot start a stop string', () => {
  const s = new TextStopper(opts({ stop: ['\n\n'] }), 0);
  assert.equal(s.push('x = 1\n', 0), 'x = 1');
  assert.equal(s.push('y', 0), '\ny');
  assert.equal(s.finishReason, null);
});

test('the earliest of several stop strings wins', () => {
  const s = new TextStopper(opts({ stop: ['END', ';'] }), 0);
  assert.equal(s.push('a;bEND', 0), 'a');
});

test('maxLines 1 is the newline stop', () => {
  const s = new TextStopper(opts({ maxLines: 1 }), 0);
  assert.equal(s.push('return a + b;', 0), 'return a + b;');
  assert.equal(s.push('\n}', 0), '');
  assert.equal(s.finishReason, 'stop');
  assert.equal(s.fullText, 'return a + b;');
});

test('the time budget only stops once the first line is complete', () => {
  const s = new TextStopper(opts({ timeBudgetMs: 10 }), 0);
  s.push('a very long first line', 1000);
  assert.equal(s.finishReason, null);
  s.push('\nsecond', 1001);
  assert.equal(s.finishReason, 'time');
});

test('decode options: defaults, and absurd values are refused with the option named', () => {
  assert.equal(resolveDecodeOptions().temperature, 0);
  assert.throws(() => resolveDecodeOptions({ topP: 7 }), /topP must be between 0 and 1/);
  assert.throws(() => resolveDecodeOptions({ maxNewTokens: 1.5 }), /maxNewTokens must be an integer/);
  assert.throws(() => resolveDecodeOptions({ temperature: NaN }), /temperature must be a finite number/);
  assert.throws(() => resolveDecodeOptions({ numBeams: 2, numReturnSequences: 3 }), /must not exceed/);
  assert.throws(() => resolveDecodeOptions({ stop: [1 as unknown as string] }), /stop must be an array of strings/);
  // Stop strings are matched at every token: a bounded list of short strings, whatever a request sends.
  const many = Array.from({ length: 200_000 }, (_, i) => `s${i}`);
  assert.throws(() => resolveDecodeOptions({ stop: many }), /stop takes at most 64 strings, got 200000/);
  assert.throws(() => resolveDecodeOptions({ stop: ['x'.repeat(257)] }), /stop: a string may be at most 256 characters, got one of 257/);
  assert.equal(resolveDecodeOptions({ stop: many.slice(0, 64) }).stop.length, 64);
});
