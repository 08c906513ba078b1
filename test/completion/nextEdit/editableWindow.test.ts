import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { editableWindow, linesAround, originalWindowText } from '../../../src/completion/nextEdit/editableWindow';

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i}`);
const offsetOfLine = (lines: string[], line: number, eol = '\n') => lines.slice(0, line).join(eol).length + (line > 0 ? eol.length : 0);

test('the window is the cursor line with 10 lines above and 10 below', () => {
  const lines = numbered(50);
  const text = lines.join('\n');
  const cursor = offsetOfLine(lines, 25) + 3;
  const w = editableWindow(text, cursor);
  assert.ok(w);
  assert.equal(w.startLine, 15);
  assert.equal(w.endLine, 35);
  assert.equal(w.text, lines.slice(15, 36).join('\n'));
  assert.equal(w.text.slice(w.cursorOffsetInWindow), text.slice(cursor, w.endOffset));
  assert.equal(text.slice(w.startOffset, w.endOffset), w.text);
  assert.equal(w.eol, '\n');
});

test('at the start of the file the window is clipped above', () => {
  const lines = numbered(50);
  const w = editableWindow(lines.join('\n'), offsetOfLine(lines, 2));
  assert.ok(w);
  assert.deepEqual([w.startLine, w.endLine, w.startOffset], [0, 12, 0]);
  assert.equal(w.text, lines.slice(0, 13).join('\n'));
  assert.equal(w.cursorOffsetInWindow, offsetOfLine(lines, 2));
});

test('at the end of the file the window is clipped below, and a final newline is an empty last line', () => {
  const lines = numbered(30);
  const text = `${lines.join('\n')}\n`;
  const w = editableWindow(text, text.length);
  assert.ok(w);
  assert.deepEqual([w.startLine, w.endLine], [20, 30]);
  assert.equal(w.text, `${lines.slice(20).join('\n')}\n`);
  assert.equal(w.endOffset, text.length);
  assert.equal(w.cursorOffsetInWindow, w.text.length);
});

test('an empty document gives a one-line empty window', () => {
  assert.deepEqual(editableWindow('', 0), { startLine: 0, endLine: 0, startOffset: 0, endOffset: 0, text: '', cursorOffsetInWindow: 0, eol: '\n' });
});

test('a 10 MB one-line file gives no window, and a long line above or below ends the window there', () => {
  const huge = 'x'.repeat(10_000_000);
  assert.equal(editableWindow(huge, 5_000_000), null);
  assert.equal(editableWindow(huge, 0), null);
  const lines = [...numbered(5), 'y'.repeat(5_000), ...numbered(5), 'z'.repeat(5_000), ...numbered(5)];
  const w = editableWindow(lines.join('\n'), offsetOfLine(lines, 8));
  assert.ok(w);
  assert.deepEqual([w.startLine, w.endLine], [6, 10]);
  assert.ok(!w.text.includes('y') && !w.text.includes('z'));
});

test('the window stops growing at maxWindowChars, evenly above and below', () => {
  const lines = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(900, '.'));
  const w = editableWindow(lines.join('\n'), offsetOfLine(lines, 20), { maxWindowChars: 4_000 });
  assert.ok(w);
  assert.ok(w.text.length <= 4_000, `${w.text.length}`);
  assert.deepEqual([w.startLine, w.endLine], [19, 22]);
});

test('a CRLF document: the window text is LF, offsets are the document’s, eol says CRLF', () => {
  const lines = numbered(5);
  const text = lines.join('\r\n');
  const cursor = offsetOfLine(lines, 3, '\r\n') + 2;
  const w = editableWindow(text, cursor);
  assert.ok(w);
  assert.equal(w.text, lines.join('\n'));
  assert.equal(w.eol, '\r\n');
  assert.equal(w.endOffset, text.length);
  assert.equal(w.cursorOffsetInWindow, offsetOfLine(lines, 3) + 2);
});

test('the original window is the window before the latest edit (Zed’s two cases)', () => {
  // "one" -> "ONE" in "zero\none\ntwo\nthree\n", window of one line above and below line 1.
  const text = 'zero\nONE\ntwo\nthree\n';
  const w = editableWindow(text, 6, { linesAbove: 1, linesBelow: 1 });
  assert.ok(w);
  assert.equal(w.text, 'zero\nONE\ntwo');
  assert.equal(originalWindowText(text, w, { offset: 5, removedText: 'one', insertedText: 'ONE' }), 'zero\none\ntwo');
  // "aaaaabbbbb": 5..10 replaced by "b"; a window ending at the end of the insertion maps to the end of the removal.
  const short = 'aaaaab';
  const whole = editableWindow(short, 0);
  assert.ok(whole);
  assert.equal(originalWindowText(short, whole, { offset: 5, removedText: 'bbbbb', insertedText: 'b' }), 'aaaaabbbbb');
  assert.equal(originalWindowText(short, whole), 'aaaaab');
});

test('the original window of an edit that added lines has the old line count; an edit below the window changes nothing', () => {
  const text = 'a\nb\nNEW1\nNEW2\nc\nd';
  const w = editableWindow(text, 0, { linesBelow: 4 });
  assert.ok(w);
  assert.equal(originalWindowText(text, w, { offset: 4, removedText: '', insertedText: 'NEW1\nNEW2\n' }), 'a\nb\nc');
  const far = editableWindow(text, 0, { linesBelow: 1 });
  assert.ok(far);
  assert.equal(originalWindowText(text, far, { offset: 12, removedText: 'x', insertedText: '' }), 'a\nb');
});

test('linesAround keeps whole lines up to the count and the character cap', () => {
  const text = numbered(10).join('\n');
  const start = text.indexOf('line 5');
  assert.deepEqual(linesAround(text, start + 2, start + 4, 2, 400), { before: 'line 3\nline 4\nli', after: ' 5\nline 6\nline 7' });
  assert.deepEqual(linesAround(text, start, start, 2, 10), { before: 'line 4\n', after: 'line 5' });
  assert.deepEqual(linesAround('a\r\nb\r\nc', 3, 4, 0, 400), { before: '', after: '' });
});
