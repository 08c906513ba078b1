import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkEdits, EDIT_REJECTIONS, type EditCheckInput, isTooLarge } from '../../../src/completion/nextEdit/checkEdits';
import { EditHistory } from '../../../src/completion/nextEdit/editHistory';
import { editableWindow } from '../../../src/completion/nextEdit/editableWindow';
import { parseAnswer, type WindowEdit } from '../../../src/completion/nextEdit/parseAnswer';

const LINES = Array.from({ length: 40 }, (_, i) => `let v${i} = ${i};`);
const DOC = LINES.join('\n');
const CURSOR = DOC.indexOf('let v20');
const WINDOW = editableWindow(DOC, CURSOR)!;
const edit = (line: number, from: number, to: number, newText: string, endLine = line): WindowEdit => ({
  startLine: line,
  startCharacter: from,
  endLine,
  endCharacter: to,
  newText,
});
const check = (over: Partial<EditCheckInput>) => checkEdits({ documentText: DOC, window: WINDOW, edits: [edit(20, 4, 7, 'w20')], ...over });

test('a good edit passes, unchanged', () => {
  const edits = [edit(20, 4, 7, 'w20'), edit(21, 0, 0, '// next\n')];
  assert.deepEqual(check({ edits }), { ok: true, edits });
  assert.deepEqual([WINDOW.startLine, WINDOW.endLine], [10, 30]);
});

test('outsideWindow: an edit on a line the model was not shown', () => {
  assert.deepEqual(check({ edits: [edit(31, 0, 1, 'x')] }), { ok: false, reason: 'outsideWindow' });
  assert.deepEqual(check({ edits: [edit(9, 0, 1, 'x')] }), { ok: false, reason: 'outsideWindow' });
  assert.deepEqual(check({ edits: [edit(30, 0, 1, 'x', 31)] }), { ok: false, reason: 'outsideWindow' });
});

test('doesNotApply: the document moved on, or the edits are not a clean set', () => {
  const typedAbove = `// new line\n${DOC}`;
  assert.deepEqual(check({ documentText: typedAbove }), { ok: false, reason: 'doesNotApply' });
  assert.deepEqual(check({ documentText: DOC.replace('let v25', 'let x25') }), { ok: false, reason: 'doesNotApply' });
  assert.deepEqual(check({ documentText: DOC.slice(0, WINDOW.endOffset - 3) }), { ok: false, reason: 'doesNotApply' });
  assert.deepEqual(check({ edits: [edit(20, 4, 99, 'x')] }), { ok: false, reason: 'doesNotApply' }, 'past the line end');
  assert.deepEqual(check({ edits: [edit(20, 5, 4, 'x')] }), { ok: false, reason: 'doesNotApply' }, 'backwards');
  assert.deepEqual(check({ edits: [edit(21, 0, 1, 'x'), edit(20, 0, 1, 'y')] }), { ok: false, reason: 'doesNotApply' }, 'out of order');
  assert.deepEqual(check({ edits: [edit(20, 0, 5, 'x'), edit(20, 3, 6, 'y')] }), { ok: false, reason: 'doesNotApply' }, 'overlapping');
});

test('noChange: no edits, or edits that write what is there', () => {
  assert.deepEqual(check({ edits: [] }), { ok: false, reason: 'noChange' });
  assert.deepEqual(check({ edits: [edit(20, 4, 7, 'v20')] }), { ok: false, reason: 'noChange' });
});

test('tooLarge: an answer for some other text is dropped; a block of new lines is not', () => {
  const unrelated = Array.from({ length: 21 }, (_, i) => `print("hello ${i}")`).join('\n');
  const parsed = parseAnswer(`${unrelated}\n<|file_sep|>`, WINDOW);
  assert.ok(parsed && parsed.edits.length > 0);
  assert.deepEqual(check({ edits: parsed.edits }), { ok: false, reason: 'tooLarge' });
  const block = Array.from({ length: 12 }, (_, i) => `  step(${i});\n`).join('');
  assert.deepEqual(check({ edits: [edit(21, 0, 0, block)] }), { ok: true, edits: [edit(21, 0, 0, block)] });
  assert.equal(isTooLarge('a\nb\nc\nd', 'a\nx\ny\nd'), false, 'half the lines may change');
  assert.equal(isTooLarge('a\nb\nc\nd', 'w\nx\ny\nd'), true);
  assert.equal(isTooLarge('a', 'b'), false, 'two lines always may');
  assert.equal(isTooLarge('a\nb\nc\nd\ne', 'a\nx\ny\nz\ne'), true, 'three of five is more than half');
  assert.equal(isTooLarge('a', `a${'\nnew'.repeat(40)}`), false, 'added lines do not count');
});

test('undoesLastEdit: putting back what the user just replaced', () => {
  const history = new EditHistory();
  let text = DOC;
  const at = text.indexOf('v20') + 1;
  for (const [i, ch] of [...'999'].entries()) {
    text = text.slice(0, at + i) + ch + text.slice(at + i);
    history.record({ path: 'a.ts', offset: at + i, removedLength: 0, insertedText: ch, atMs: i * 100, documentTextAfter: text });
  }
  const window = editableWindow(text, at)!;
  const lastEdit = history.latestEdit('a.ts');
  assert.deepEqual(lastEdit, { offset: at, removedText: '', insertedText: '999', atMs: 200 });
  const undo = { documentText: text, window, lastEdit };
  assert.deepEqual(check({ ...undo, edits: [edit(20, 5, 8, '')] }), { ok: false, reason: 'undoesLastEdit' });
  assert.deepEqual(check({ ...undo, edits: [edit(20, 8, 8, '9')] }).ok, true, 'going on with it is fine');
  assert.deepEqual(check({ ...undo, edits: [edit(21, 5, 6, '9')] }).ok, true, 'an edit elsewhere is fine');
  const renamed = { documentText: DOC.replace('v20', 'total'), window: editableWindow(DOC.replace('v20', 'total'), CURSOR)! };
  const rename = { offset: CURSOR + 4, removedText: 'v20', insertedText: 'total' };
  assert.deepEqual(check({ ...renamed, lastEdit: rename, edits: [edit(20, 4, 9, 'v20')] }), { ok: false, reason: 'undoesLastEdit' });
  assert.deepEqual(check({ ...renamed, lastEdit: rename, edits: [edit(21, 4, 7, 'total')] }).ok, true);
});

test('parsesWorse: the caller’s parser hook sees the whole document before and after', () => {
  const seen: string[][] = [];
  const parsesNoWorse = (before: string, after: string) => {
    seen.push([before, after]);
    return !after.includes('w20');
  };
  assert.deepEqual(check({ parsesNoWorse }), { ok: false, reason: 'parsesWorse' });
  assert.deepEqual(seen, [[DOC, DOC.replace('let v20', 'let w20')]]);
  assert.equal(check({ parsesNoWorse: () => true }).ok, true);
});

test('every reason is listed once, so they can be counted', () => {
  assert.deepEqual([...EDIT_REJECTIONS].sort(), ['doesNotApply', 'noChange', 'outsideWindow', 'parsesWorse', 'tooLarge', 'undoesLastEdit']);
});

test('CRLF documents: offsets are the document’s, the window still applies', () => {
  const crlf = DOC.replace(/\n/g, '\r\n');
  const window = editableWindow(crlf, crlf.indexOf('let v20'))!;
  const seen: string[] = [];
  const result = checkEdits({ documentText: crlf, window, edits: [edit(20, 4, 7, 'w20')], parsesNoWorse: (_b, after) => seen.push(after) > 0 });
  assert.equal(result.ok, true);
  assert.equal(seen[0], crlf.replace('let v20', 'let w20'));
});
