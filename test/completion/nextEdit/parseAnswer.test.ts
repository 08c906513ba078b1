import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { editableWindow } from '../../../src/completion/nextEdit/editableWindow';
import { answerWindowText, diffLines, parseAnswer, type WindowEdit, windowEdits } from '../../../src/completion/nextEdit/parseAnswer';

/** The document with `edits` applied (last first, so earlier positions stay valid), as an editor would. */
function apply(text: string, edits: readonly WindowEdit[]): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(eol);
  const offset = (line: number, character: number) => lines.slice(0, line).reduce((sum, l) => sum + l.length + eol.length, 0) + character;
  let out = text;
  for (const e of [...edits].reverse()) out = out.slice(0, offset(e.startLine, e.startCharacter)) + e.newText + out.slice(offset(e.endLine, e.endCharacter));
  return out;
}

const DOC = ['import os', '', 'def area(width, height):', '    return width * height', '', 'print(area(2, 3))'].join('\n');
const windowOf = (text: string) => {
  const w = editableWindow(text, 0);
  assert.ok(w);
  return w;
};

test('one changed line gives one edit of just the changed characters', () => {
  const w = windowOf(DOC);
  const parsed = parseAnswer(`${w.text.replace('width * height', 'width * height / 2')}\n<|file_sep|>`, w);
  assert.deepEqual(parsed?.edits, [{ startLine: 3, startCharacter: 25, endLine: 3, endCharacter: 25, newText: ' / 2' }]);
  assert.equal(parsed?.truncated, false);
});

test('the answer ends at any stop string, or where the engine says it stopped; trailing newlines are the format’s', () => {
  const w = windowOf(DOC);
  const changed = w.text.replace('import os', 'import sys');
  for (const answer of [`${changed}\n<|file_sep|>junk`, `${changed}<|endoftext|>`, `${changed}\n</s>`]) {
    assert.equal(answerWindowText(answer, w.text)?.text, changed, JSON.stringify(answer.slice(-12)));
  }
  assert.deepEqual(answerWindowText(`${changed}\n`, w.text, true), { text: changed, truncated: false });
  assert.equal(answerWindowText(w.text, `${w.text}\n`, true)?.text, `${w.text}\n`, 'a window ending in an empty line keeps it');
});

test('an empty answer, or one of only newlines, is no suggestion', () => {
  const w = windowOf(DOC);
  assert.equal(parseAnswer('<|file_sep|>', w), null);
  assert.equal(parseAnswer('\n\n<|endoftext|>', w), null);
  assert.equal(parseAnswer('', w, true), null);
});

test('a truncated answer keeps the window’s tail: its partial last line and what follows its last matching line are dropped', () => {
  const lines = Array.from({ length: 21 }, (_, i) => `value_${i} = ${i}`);
  const text = lines.join('\n');
  const w = editableWindow(text, 0);
  assert.ok(w && w.endLine === 10);
  const windowLines = w.text.split('\n');
  // Lines 0..3 with line 1 changed, then a partial line 4: no end marker.
  const answer = [windowLines[0], 'value_1 = 100', windowLines[2], windowLines[3], 'valu'].join('\n');
  const parsed = parseAnswer(answer, w);
  assert.ok(parsed);
  assert.equal(parsed.truncated, true);
  assert.deepEqual(parsed.edits, [{ startLine: 1, startCharacter: 11, endLine: 1, endCharacter: 11, newText: '00' }]);
  assert.equal(parsed.windowText.split('\n').length, windowLines.length, 'no line of the tail deleted');
  // A change after the last matching line is dropped: it may have been an insertion or a replacement.
  const unsure = parseAnswer([windowLines[0], windowLines[1], 'value_2 = 200', 'value_3 ='].join('\n'), w);
  assert.deepEqual(unsure?.edits, []);
  assert.equal(parseAnswer('value_0 =', w), null, 'no complete line at all');
});

test('a CRLF document: positions are the same lines and characters, inserted lines take CRLF', () => {
  const crlf = DOC.replace(/\n/g, '\r\n');
  const w = windowOf(crlf);
  assert.equal(w.eol, '\r\n');
  const answer = `${w.text.replace('def area(width, height):', 'def area(width, height):\n    """The area."""')}\r\n<|file_sep|>`;
  const parsed = parseAnswer(answer, w);
  assert.ok(parsed);
  assert.deepEqual(parsed.edits, [{ startLine: 3, startCharacter: 0, endLine: 3, endCharacter: 0, newText: '    """The area."""\r\n' }]);
  assert.equal(apply(crlf, parsed.edits), crlf.replace('height):\r\n', 'height):\r\n    """The area."""\r\n'));
});

test('lines added after the last line and lines deleted at the end or start keep the line breaks right', () => {
  const w = windowOf('a\nb\nc');
  const cases: [string, string][] = [
    ['a\nb\nc\nd\ne', 'a\nb\nc\nd\ne'],
    ['a\nb', 'a\nb'],
    ['b\nc', 'b\nc'],
    ['x\na\nb\nc', 'x\na\nb\nc'],
    ['a\nB\nc', 'a\nB\nc'],
    ['', 'a\nb\nc'],
  ];
  for (const [answer, expected] of cases) {
    const parsed = parseAnswer(`${answer}<|endoftext|>`, w);
    if (answer === '') assert.equal(parsed, null);
    else assert.equal(apply('a\nb\nc', parsed?.edits ?? []), expected, answer);
  }
});

test('the edits turn any window into any answer (seeded random windows and answers)', () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return Math.floor(seed / 65_536) % n;
  };
  const pool = ['', 'x', 'foo()', '  return y;', '}', 'let z = 1;', 'a\tb'];
  for (let round = 0; round < 300; round++) {
    const lines = Array.from({ length: 1 + random(8) }, () => pool[random(pool.length)]);
    const next = lines.flatMap((l) => (random(4) === 0 ? [] : random(4) === 0 ? [l, pool[random(pool.length)]] : [random(3) === 0 ? `${l}!` : l]));
    const eol = random(2) ? '\r\n' : '\n';
    const prefix = `head${eol}`;
    const doc = prefix + lines.join(eol);
    const edits = windowEdits({ startLine: 1, text: lines.join('\n'), eol }, next.join('\n'));
    assert.equal(apply(doc, edits), prefix + next.join(eol), JSON.stringify({ lines, next }));
  }
});

test('diffLines keeps common lines and marks the rest', () => {
  assert.deepEqual(diffLines(['a', 'b', 'c'], ['a', 'x', 'c', 'd']), ['equal', 'delete', 'insert', 'equal', 'insert']);
  assert.deepEqual(diffLines([], ['a']), ['insert']);
  assert.deepEqual(diffLines(['a'], []), ['delete']);
});
