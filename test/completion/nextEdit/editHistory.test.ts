import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { EditHistory, limitLines } from '../../../src/completion/nextEdit/editHistory';

/** A document that reports each change to the history the way the VS Code adapter would. */
class Doc {
  constructor(
    readonly history: EditHistory,
    readonly path: string,
    public text: string,
  ) {}

  change(offset: number, removedLength: number, insertedText: string, atMs: number): void {
    this.text = this.text.slice(0, offset) + insertedText + this.text.slice(offset + removedLength);
    this.history.record({ path: this.path, offset, removedLength, insertedText, atMs, documentTextAfter: this.text });
  }

  type(offset: number, chars: string, atMs: number, stepMs = 100): number {
    for (const [i, ch] of [...chars].entries()) this.change(offset + i, 0, ch, atMs + i * stepMs);
    return atMs + chars.length * stepMs;
  }
}

const lines = (count: number, tag = 'line') => Array.from({ length: count }, (_, i) => `${tag} ${i}`).join('\n');

test('a burst of typing is one edit, with three lines of context each side', () => {
  const doc = new Doc(new EditHistory(), 'src/a.ts', lines(10));
  const at = doc.text.indexOf('line 5') + 'line 5'.length;
  doc.type(at, 'hello', 1_000);
  assert.deepEqual(doc.history.blocks(), [
    {
      path: 'src/a.ts',
      original: 'line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8',
      updated: 'line 2\nline 3\nline 4\nline 5hello\nline 6\nline 7\nline 8',
    },
  ]);
  assert.deepEqual(doc.history.latestEdit('src/a.ts'), { offset: at, removedText: '', insertedText: 'hello', atMs: 1_400 });
});

test('a pause of 1.5 s, a change elsewhere, or another document starts a new edit', () => {
  const history = new EditHistory();
  const doc = new Doc(history, 'a.ts', lines(20));
  const at = doc.text.indexOf('line 3') + 6;
  doc.type(at, 'ab', 0);
  doc.type(at + 2, 'cd', 1_700);
  assert.equal(history.blocks(10).length, 2, 'the pause split the burst');
  doc.type(doc.text.indexOf('line 15'), 'x', 1_900);
  assert.equal(history.blocks(10).length, 3, 'a far change is its own edit');
  const other = new Doc(history, 'b.ts', 'b');
  other.type(1, 'y', 2_000);
  doc.type(doc.text.indexOf('xline 15') + 1, 'z', 2_100);
  assert.deepEqual(
    history.blocks(10).map((b) => b.updated.split('\n').find((l) => /[a-z]{2}|x|y|z/.test(l.replace('line', '')))),
    ['line 3ab', 'line 3abcd', 'xline 15', 'by', 'xzline 15'],
  );
});

test('backspace in a burst edits the burst; a burst that removes what it typed leaves nothing', () => {
  const doc = new Doc(new EditHistory(), 'a.ts', 'let x = 1;');
  let t = doc.type(3, 'helo', 0);
  doc.change(6, 1, '', t);
  t = doc.type(6, 'lo', t + 100);
  assert.equal(doc.text, 'lethello x = 1;');
  assert.equal(doc.history.latestEdit('a.ts')?.insertedText, 'hello');
  assert.deepEqual(doc.history.blocks(), [{ path: 'a.ts', original: 'let x = 1;', updated: 'lethello x = 1;' }]);
  for (let i = 5; i > 0; i--) doc.change(3 + i - 1, 1, '', t + (6 - i) * 100);
  assert.equal(doc.text, 'let x = 1;');
  assert.deepEqual(doc.history.blocks(), []);
});

test('a replacement that runs past the burst merges what it removed beyond it', () => {
  const doc = new Doc(new EditHistory(), 'a.ts', 'abcdef');
  doc.type(2, 'XY', 0);
  doc.change(3, 3, 'Z', 300);
  assert.equal(doc.text, 'abXZef');
  assert.deepEqual(doc.history.latestEdit('a.ts'), { offset: 2, removedText: 'cd', insertedText: 'XZ', atMs: 300 });
});

test('undo removes the edit it reverses, redo puts it back, and the edit before is the latest again', () => {
  const doc = new Doc(new EditHistory(), 'a.ts', lines(30));
  const first = doc.text.indexOf('line 2') + 6;
  doc.type(first, '!', 0);
  const second = doc.text.indexOf('line 20') + 7;
  doc.type(second, 'abc', 5_000);
  assert.equal(doc.history.blocks(10).length, 2);
  doc.change(second, 3, '', 9_000);
  assert.equal(doc.history.blocks(10).length, 1, 'undone');
  assert.deepEqual(doc.history.latestEdit('a.ts'), { offset: first, removedText: '', insertedText: '!', atMs: 0 });
  doc.change(second, 0, 'abc', 9_500);
  assert.equal(doc.history.blocks(10).length, 2, 'redone');
  assert.equal(doc.history.latestEdit('a.ts')?.insertedText, 'abc');
  doc.change(second, 3, '', 10_000);
  doc.change(first, 1, '', 10_500);
  assert.deepEqual(doc.history.blocks(10), [], 'both undone');
  doc.change(first, 0, '!', 11_000);
  doc.change(second, 0, 'abc', 11_100);
  assert.deepEqual(
    doc.history.blocks(10).map((b) => b.updated.split('\n').find((l) => /!|abc/.test(l))),
    ['line 2!', 'line 20abc'],
    'both redone, in order',
  );
});

test('an edit before an older one keeps that one placed, so undoing the newer makes the older the latest again', () => {
  const doc = new Doc(new EditHistory(), 'a.ts', lines(10));
  const late = doc.text.indexOf('line 8');
  doc.type(late, 'AA', 0);
  doc.type(0, 'BBB', 5_000);
  doc.change(0, 3, '', 9_000);
  assert.deepEqual(doc.history.latestEdit('a.ts'), { offset: late, removedText: '', insertedText: 'AA', atMs: 100 });
  doc.type(0, 'C', 10_000);
  assert.equal(doc.history.latestEdit('a.ts')?.offset, 0);
});

test('10,000 one-character changes in a burst stay bounded', () => {
  const history = new EditHistory();
  const doc = new Doc(history, 'big.ts', lines(5));
  for (let i = 0; i < 10_000; i++) doc.change(doc.text.length, 0, i % 50 === 49 ? '\n' : 'x', i * 10);
  const size = history.size();
  assert.ok(size.edits >= 2 && size.edits <= 16, `${size.edits} edits`);
  assert.ok(size.chars <= 20_000, `${size.chars} chars`);
  const blocks = history.blocks();
  assert.equal(blocks.length, 3);
  for (const b of blocks) assert.ok(b.updated.split('\n').length <= 40 && b.original.split('\n').length <= 40);
  assert.ok(
    blocks.some((b) => b.updated.includes('\n...\n')),
    'a long block is cut with "..."',
  );
});

test('10,000 scattered changes in four documents keep 3 documents, 16 edits each, 20,000 characters in all', () => {
  const history = new EditHistory();
  const docs = ['a.ts', 'b.ts', 'c.ts', 'd.ts'].map((p) => new Doc(history, p, lines(2_000, p)));
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return Math.floor(seed / 65_536) % n; // the high bits: the low ones of this generator repeat quickly
  };
  let most = { documents: 0, edits: 0, chars: 0 };
  for (let i = 0; i < 10_000; i++) {
    const doc = docs[random(4)];
    const at = random(doc.text.length);
    doc.change(at, Math.min(random(400), doc.text.length - at), 'word'.repeat(random(100)), i * 2_000);
    const size = history.size();
    most = { documents: Math.max(most.documents, size.documents), edits: Math.max(most.edits, size.edits), chars: Math.max(most.chars, size.chars) };
  }
  assert.ok(most.documents === 3 && most.edits <= 48 && most.chars <= 20_000, JSON.stringify(most));
  assert.ok(most.chars > 15_000, `the character cap is what binds: ${most.chars}`);
  assert.ok(history.size().edits > 3, 'still holds recent edits');
});

test('a document keeps its 16 newest edits', () => {
  const doc = new Doc(new EditHistory(), 'a.ts', lines(40));
  for (let i = 0; i < 30; i++) doc.type(doc.text.indexOf(`line ${i}\n`), `e${i}:`, i * 2_000);
  assert.equal(doc.history.size().edits, 16);
  const blocks = doc.history.blocks(100);
  assert.equal(blocks.length, 16);
  assert.ok(blocks[0].updated.includes('e14:line 14') && blocks[15].updated.includes('e29:line 29'));
});

test('a fourth edited document pushes out the least recently edited one; forget drops one at once', () => {
  const history = new EditHistory();
  for (const [i, p] of ['a', 'b', 'c', 'd'].entries()) new Doc(history, p, 'text').type(0, p, i * 5_000);
  assert.deepEqual(
    history.blocks(10).map((b) => b.path),
    ['b', 'c', 'd'],
  );
  history.forget('c');
  assert.deepEqual(
    history.blocks(10).map((b) => b.path),
    ['b', 'd'],
  );
  assert.equal(history.latestEdit('c'), undefined);
  assert.equal(history.size().documents, 2);
});

test('the first change seen in a document: a deletion needs its removed text, and an inconsistent event resets', () => {
  const history = new EditHistory();
  history.record({ path: 'a', offset: 1, removedLength: 2, insertedText: '', atMs: 0, documentTextAfter: 'ad' });
  assert.deepEqual(history.blocks(), [], 'what was removed is unknown');
  assert.equal(history.size().documents, 1, 'but the text is held for the next change');
  history.record({ path: 'a', offset: 1, removedLength: 0, insertedText: 'X', atMs: 5_000, documentTextAfter: 'aXd' });
  assert.deepEqual(history.blocks(), [{ path: 'a', original: 'ad', updated: 'aXd' }]);
  history.record({ path: 'b', offset: 1, removedLength: 2, insertedText: 'Y', atMs: 6_000, documentTextAfter: 'aYd', removedText: 'bc' });
  assert.deepEqual(history.blocks(1), [{ path: 'b', original: 'abcd', updated: 'aYd' }]);
  history.record({ path: 'a', offset: 0, removedLength: 0, insertedText: 'Q', atMs: 9_000, documentTextAfter: 'Q-a-much-longer-text' });
  assert.deepEqual(
    history.blocks(10).filter((b) => b.path === 'a'),
    [{ path: 'a', original: '-a-much-longer-text', updated: 'Q-a-much-longer-text' }],
    'a missed change: the old edits are dropped, not misplaced, and tracking starts again',
  );
  history.record({ path: 'a', offset: 5, removedLength: 0, insertedText: 'Z', atMs: 9_100, documentTextAfter: 'nothing like it' });
  assert.equal(history.latestEdit('a')?.insertedText, 'Q', 'an event that does not describe its own text is ignored');
});

test('changes without the text after are applied to the held text', () => {
  const history = new EditHistory();
  history.record({ path: 'a', offset: 0, removedLength: 0, insertedText: 'ab', atMs: 0, documentTextAfter: 'ab\ncd' });
  history.record({ path: 'a', offset: 3, removedLength: 1, insertedText: 'X', atMs: 5_000 });
  assert.deepEqual(history.latestEdit('a'), { offset: 3, removedText: 'c', insertedText: 'X', atMs: 5_000 });
  history.record({ path: 'unseen', offset: 0, removedLength: 0, insertedText: 'x', atMs: 0 });
  assert.equal(history.size().documents, 1, 'no text, nothing held');
});

test('CRLF documents give LF blocks; a change larger than 4,000 characters is not kept', () => {
  const doc = new Doc(new EditHistory(), 'w.ts', 'one\r\ntwo\r\nthree');
  doc.type(doc.text.indexOf('two') + 3, 's', 0);
  assert.deepEqual(doc.history.blocks(), [{ path: 'w.ts', original: 'one\ntwo\nthree', updated: 'one\ntwos\nthree' }]);
  doc.change(0, 0, 'p'.repeat(5_000), 5_000);
  assert.equal(doc.history.blocks(10).length, 1);
  assert.equal(doc.history.latestEdit('w.ts')?.insertedText, 's');
});

test('limitLines keeps the head, "...", and the tail', () => {
  const text = lines(100);
  const cut = limitLines(text, 40).split('\n');
  assert.equal(cut.length, 40);
  assert.deepEqual([cut[0], cut[19], cut[20], cut[21], cut[39]], ['line 0', 'line 19', '...', 'line 81', 'line 99']);
  assert.equal(limitLines('a\nb', 40), 'a\nb');
});
