import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkRing } from '../../src/completion/context/chunkRing';
import { documentContext, positionAt, textSource } from '../../src/completion/context/documentContext';
import { AdaptiveDebounce } from '../../src/completion/adaptiveDebounce';
import { insertAt } from '../../src/completion/textOverlay';

const budget = { prefixLines: 256, suffixLines: 64, prefixChars: 100000, suffixChars: 100000, snapLines: 16 };
const doc = (n: number) => textSource(Array.from({ length: n }, (_, i) => `line ${i}`).join('\n'));

test('windows split the cursor line into prefix and suffix parts', () => {
  const text = 'a = 1\ndef f(x):\n    return x + 1\nprint(f(2))';
  const at = text.indexOf('x + 1');
  const ctx = documentContext(textSource(text), positionAt(text, at), budget);
  assert.equal(ctx.prefix, 'a = 1\ndef f(x):\n');
  assert.equal(ctx.linePrefix, '    return ');
  assert.equal(ctx.lineSuffix, 'x + 1');
  assert.equal(ctx.suffix, '\nprint(f(2))');
  assert.deepEqual(ctx.nextLines, ['print(f(2))']);
  assert.equal(ctx.indent, '    ');
  assert.equal(ctx.lineAbove, 'def f(x):', 'the nearest non-blank line above, for the filters and the gate');
});

test('the prefix window start snaps to blocks: moving the cursor a few lines keeps the prompt head', () => {
  const d = doc(1000);
  const small = { ...budget, prefixLines: 100 };
  const starts = [501, 505, 510, 515].map((line) => documentContext(d, { line, character: 0 }, small).prefixStartLine);
  assert.ok(starts.every((s) => s % 16 === 0));
  assert.equal(new Set(starts).size, 1, `starts ${starts}`);
});

test('over the character budget the prefix still fills at least three quarters of it, ending at the cursor', () => {
  const d = doc(1000);
  for (const prefixChars of [120, 500, 2000]) {
    const ctx = documentContext(d, { line: 600, character: 3 }, { ...budget, prefixChars, suffixChars: 0 });
    assert.ok(ctx.prefix.length <= prefixChars, `${ctx.prefix.length} > ${prefixChars}`);
    assert.ok(ctx.prefix.length >= 0.75 * prefixChars - 10, `only ${ctx.prefix.length} of ${prefixChars} characters used`);
    assert.ok(ctx.prefix.endsWith('line 599\n'));
  }
});

test('pressing Enter line after line moves the window start only once per snap step', () => {
  const d = doc(1000);
  const b = { ...budget, prefixChars: 500, suffixChars: 0 };
  const starts = Array.from({ length: 48 }, (_, i) => documentContext(d, { line: 600 + i, character: 0 }, b).prefixStartLine);
  const changes = starts.filter((s, i) => i > 0 && s !== starts[i - 1]).length;
  // About 50 lines fit, so the step is 12: 48 lines of movement change the start 4 or 5 times, not 48.
  assert.ok(changes <= 5, `${changes} changes: ${starts}`);
});

test('a window that keeps the previous start (up to 1.5x its budget) moves at most half as often, and never overflows the slack', () => {
  const d = doc(1000);
  const b = { ...budget, prefixChars: 500, suffixChars: 0, stickyPrefixChars: 750 };
  let keep: number | undefined;
  const starts: number[] = [];
  for (let i = 0; i < 96; i++) {
    const ctx = documentContext(d, { line: 600 + i, character: 0 }, b, keep);
    assert.ok(ctx.prefix.length <= 750, `${ctx.prefix.length} characters at line ${600 + i}`);
    assert.ok(ctx.prefix.endsWith(`line ${599 + i}\n`));
    starts.push(ctx.prefixStartLine);
    keep = ctx.prefixStartLine;
  }
  const sticky = starts.filter((s, i) => i > 0 && s !== starts[i - 1]).length;
  const fresh = Array.from({ length: 96 }, (_, i) => documentContext(d, { line: 600 + i, character: 0 }, b).prefixStartLine);
  const plain = fresh.filter((s, i) => i > 0 && s !== fresh[i - 1]).length;
  assert.ok(sticky * 2 <= plain, `kept start moved ${sticky} times, a fresh one ${plain}`);
  // A previous start below the fresh window, or one that no longer fits, is ignored.
  const here = documentContext(d, { line: 700, character: 0 }, b);
  assert.equal(documentContext(d, { line: 700, character: 0 }, b, 690).prefixStartLine, here.prefixStartLine);
  assert.equal(documentContext(d, { line: 700, character: 0 }, b, 100).prefixStartLine, here.prefixStartLine);
});

test('characters the suffix leaves unused go to the prefix', () => {
  const d = doc(1000);
  const b = { ...budget, prefixChars: 300, suffixChars: 300 };
  const atEnd = documentContext(d, { line: 999, character: 0 }, b);
  const inMiddle = documentContext(d, { line: 600, character: 0 }, b);
  assert.equal(atEnd.suffix, '');
  assert.ok(atEnd.prefix.length > inMiddle.prefix.length + 150, `${atEnd.prefix.length} vs ${inMiddle.prefix.length}`);
});

test('typing on the cursor line never moves the prefix window', () => {
  const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
  const starts = new Set<number>();
  for (let n = 0; n < 300; n += 7) {
    lines[600] = 'x'.repeat(n);
    starts.add(documentContext(textSource(lines.join('\n')), { line: 600, character: n }, { ...budget, prefixChars: 500 }).prefixStartLine);
  }
  assert.equal(starts.size, 1);
});

test('a 10 MB single-line file is cut around the cursor, quickly', () => {
  const huge = 'x'.repeat(10_000_000);
  const t0 = performance.now();
  const ctx = documentContext(textSource(huge), { line: 0, character: 5_000_000 }, budget);
  assert.ok(ctx.linePrefix.length <= 4000 && ctx.lineSuffix.length <= 4000);
  assert.ok(performance.now() - t0 < 1000);
});

test('the chunk ring drops near-duplicates and chunks like the text at the cursor', () => {
  const ring = new ChunkRing({ capacity: 3, chunkLines: 8 });
  const lines = (tag: string) => Array.from({ length: 8 }, (_, i) => `${tag}_${i} = ${i}`);
  assert.ok(ring.add('a.py', lines('a')));
  ring.add('a2.py', lines('a')); // same lines: replaces the old one
  assert.equal(ring.size, 1);
  ring.add('b.py', lines('b'));
  ring.add('c.py', lines('c'));
  ring.add('d.py', lines('d'));
  assert.equal(ring.size, 3, 'capacity');
  const picked = ring.select(10000, 'd.py', lines('c').join('\n'));
  assert.deepEqual(
    picked.map((c) => c.path),
    ['b.py'],
    'skips the current file and chunks similar to the cursor text',
  );
  assert.equal(ring.select(10, 'x', '').length, 0, 'budget');
});

test('adaptive debounce follows the typing rhythm within bounds', () => {
  const d = new AdaptiveDebounce(15, 250);
  assert.equal(d.delay(), 15);
  for (let t = 0; t < 2000; t += 100) d.keystroke(t);
  assert.equal(d.delay(), 120);
  assert.equal(d.delay(40), 40, 'a fixed setting wins');
  const slow = new AdaptiveDebounce(15, 250);
  for (let t = 0; t < 9000; t += 900) slow.keystroke(t);
  assert.equal(slow.delay(), 250);
});

test('insertAt shows the document as if a suggestion were accepted', () => {
  const d = textSource('def f():\n    \nprint(1)');
  const { doc, cursor } = insertAt(d, { line: 1, character: 4 }, 'x = 1\n    return x');
  assert.equal(doc.lineCount, 4);
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => doc.lineAt(i)),
    ['def f():', '    x = 1', '    return x', 'print(1)'],
  );
  assert.deepEqual(cursor, { line: 2, character: 12 });
});

test('budgets shrink to fit a small model context, 3/4 prefix and 1/4 suffix', async () => {
  const { fitBudget, CHARS_PER_TOKEN, CURSOR_LINE_CHARS, MEASURED_MARGIN } = await import('../../src/completion/context/fitBudget');
  const b = { ...budget, prefixChars: 3000, suffixChars: 1000 };
  const large = fitBudget(b, 0, 32768, 96).budget;
  assert.deepEqual({ ...large, stickyPrefixChars: undefined }, { ...b, stickyPrefixChars: undefined }, 'a large context keeps the settings');
  assert.equal(large.stickyPrefixChars, 4500, 'and lets a prefix that keeps its start grow by half');
  const small = fitBudget(b, 2000, 512, 96);
  const total = small.budget.prefixChars + small.budget.suffixChars + small.extraChars;
  assert.ok(total <= (512 - 96 - 16) * CHARS_PER_TOKEN - CURSOR_LINE_CHARS);
  const stickyTotal = small.budget.stickyPrefixChars! + small.budget.suffixChars + small.extraChars;
  assert.ok(stickyTotal <= (512 - 96 - 16) * CHARS_PER_TOKEN - CURSOR_LINE_CHARS, 'the slack stays inside the context');
  assert.ok(small.budget.stickyPrefixChars! >= small.budget.prefixChars);
  assert.ok(small.budget.prefixChars > 2.5 * small.budget.suffixChars);
  // A tokenizer measured at 4 characters per token gets a larger budget, within its margin.
  const measured = fitBudget(b, 0, 512, 96, 4);
  const sum = measured.budget.prefixChars + measured.budget.suffixChars;
  assert.ok(sum > total && sum <= (512 - 96 - 16) * 4 * MEASURED_MARGIN - CURSOR_LINE_CHARS, `${sum}`);
});

test('characters per token follow what a file really tokenizes to, in steps, and ignore small moves', async () => {
  const { CharsPerTokenEstimate } = await import('../../src/completion/context/charsPerTokenEstimate');
  const e = new CharsPerTokenEstimate(3);
  assert.equal(e.get('a.py'), 3, 'the measured ratio until a prompt was seen');
  e.observe('a.py', 1000, 300); // 3.33: within the hysteresis
  assert.equal(e.get('a.py'), 3);
  e.observe('a.py', 2000, 400); // 5: a dense file
  assert.equal(e.get('a.py'), 5);
  assert.equal(e.get('b.py'), 3, 'per file');
  e.observe('a.py', 100, 10); // too short to say anything
  assert.equal(e.get('a.py'), 5);
  e.observe('a.py', 100_000, 1000); // 100: bounded at 2.5x the measured ratio
  assert.equal(e.get('a.py'), 7.5);
  e.observe('b.py', 500, 1000); // 0.5: bounded at 0.8x
  assert.ok(Math.abs(e.get('b.py') - 2.4) < 1e-9);
});
