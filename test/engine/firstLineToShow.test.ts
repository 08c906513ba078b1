// firstLineToShow: what of an answer being written shows as its first line, complete or (after partialLineMs)
// partial, cut where a word ends, with the tokens that wrote it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstLineToShow } from '../../src/engine/shared/firstLineToShow';

/** Text written by these token pieces, with their ends and a distinct log-probability each. */
function written(...pieces: string[]) {
  let at = 0;
  return { text: pieces.join(''), logprobs: pieces.map((_, i) => -(i + 1)), ends: pieces.map((p) => (at += p.length)) };
}

test('a complete first line shows at once, with the tokens up to the one that wrote its newline', () => {
  const w = written('x', ' = 1', '\n', '    y');
  assert.deepEqual(firstLineToShow(w.text, w.logprobs, w.ends, 0, 1000), { text: 'x = 1', tokenLogprobs: [-1, -2, -3], tokenTextEnds: [1, 5, 6] });
  // A block that starts on the next line: its first line with code on it, the leading newline included.
  const b = written('\n', '    ', 'return', ' y', '\n');
  assert.deepEqual(firstLineToShow(b.text, b.logprobs, b.ends, 0, 0)?.text, '\n    return y');
});

test('a line still being written shows only once partialLineMs have passed, and never with partialLineMs 0', () => {
  const w = written('result', ' =', ' compute', '_total', '(', 'items', ',', ' disc');
  assert.equal(firstLineToShow(w.text, w.logprobs, w.ends, 999, 1000), null);
  assert.equal(firstLineToShow(w.text, w.logprobs, w.ends, 60_000, 0), null);
  const line = firstLineToShow(w.text, w.logprobs, w.ends, 1000, 1000);
  // " disc" may go on ("discount"): the line is cut after the comma, at a token's end, with those tokens.
  assert.deepEqual(line, {
    text: 'result = compute_total(items,',
    tokenLogprobs: [-1, -2, -3, -4, -5, -6, -7],
    tokenTextEnds: [6, 8, 16, 22, 23, 28, 29],
    partial: true,
  });
});

test('a cut never splits a word: between two word characters of two tokens is no end', () => {
  // "compute" + "_total": the token end after "compute" is inside the identifier.
  const w = written('x', ' =', ' compute', '_total');
  assert.equal(firstLineToShow(w.text, w.logprobs, w.ends, 5000, 1000)?.text, 'x =');
  // A word that has ended because a non-word character follows it in the same token.
  const v = written('if', ' ready:', ' go');
  assert.equal(firstLineToShow(v.text, v.logprobs, v.ends, 5000, 1000)?.text, 'if ready:');
  // Letters beyond ASCII are word characters too.
  const u = written('naïve', '_vär', 'de');
  assert.equal(firstLineToShow(u.text, u.logprobs, u.ends, 5000, 1000), null, 'one unfinished word: nothing to show yet');
});

test('nothing shows before a line has code on it, or when its only word is unfinished', () => {
  const blank = written('\n', '    ');
  assert.equal(firstLineToShow(blank.text, blank.logprobs, blank.ends, 5000, 1000), null);
  const word = written('compu');
  assert.equal(firstLineToShow(word.text, word.logprobs, word.ends, 5000, 1000), null);
  // Text held back for a stop string: token ends past the text are not cuts.
  const held = written('a', ' +', ' b', ' </');
  assert.equal(firstLineToShow('a + b', held.logprobs, held.ends, 5000, 1000)?.text, 'a +');
});

test('without tokens (a server that sends no log-probabilities) any character boundary may be the cut, never inside a surrogate pair', () => {
  assert.deepEqual(firstLineToShow('hello wor', [], [], 5000, 1000), { text: 'hello ', tokenLogprobs: [], tokenTextEnds: [], partial: true });
  assert.equal(firstLineToShow("s = '😀😀", [], [], 5000, 1000)?.text, "s = '😀😀");
  // An astral letter is a word character: its word may go on.
  assert.equal(firstLineToShow('a = 𝑥𝑦', [], [], 5000, 1000)?.text, 'a = ');
});
