import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closingText, openTail } from '../../../src/completion/syntax/bracketScan';
import { grammarFor } from '../../../src/completion/syntax/languages';
import { editBetween, pointAt } from '../../../src/completion/syntax/textEdit';

const lex = (id: string) => grammarFor(id)!.lexical;

test('openTail: brackets left open, innermost first; strings and comments skipped', () => {
  assert.deepEqual(openTail('int main(void) {\n  if (x) {\n    f(a, "})", \'{\'', lex('c')), {
    closers: [')', '}', '}'],
    inside: null,
    damage: 0,
    lastStrayCloser: -1,
  });
  assert.deepEqual(openTail('x = [1, (2', lex('python')), { closers: [')', ']'], inside: null, damage: 0, lastStrayCloser: -1 });
  assert.deepEqual(openTail('x = f(  # (((\n', lex('python')).closers, [')']);
  assert.deepEqual(openTail('/* { */ f(', lex('javascript')).closers, [')']);
});

test('openTail: multi-line strings and comments the text ends inside', () => {
  assert.equal(openTail('def f():\n    """Doc (\n', lex('python')).inside, '"""');
  assert.equal(openTail('int x; /* a (', lex('c')).inside, '*/');
  assert.deepEqual(openTail('const s = `a ${b + (c', lex('typescript')), { closers: [')', '}`'], inside: null, damage: 0, lastStrayCloser: -1 });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text
  assert.deepEqual(openTail('const s = `a ${b} (', lex('typescript')), { closers: [], inside: '`', damage: 0, lastStrayCloser: -1 });
});

test('openTail: the last closer that closes nothing, and a block comment closed outside any, say where a slice started', () => {
  assert.equal(openTail('x]; }\n}\nf(', lex('javascript')).lastStrayCloser, 6);
  assert.equal(openTail(' * @returns this\n */\nf(', lex('typescript')).lastStrayCloser, 18);
  assert.equal(openTail('/* a */ f(x)', lex('javascript')).lastStrayCloser, -1);
  assert.equal(openTail('x = a */ b', lex('python')).lastStrayCloser, -1, 'no block comments in Python');
});

test('openTail: damage counts closers that close nothing and unterminated one-line strings', () => {
  assert.equal(openTail('f(x))', lex('python')).damage, 1);
  assert.equal(openTail("x = d.get('-', '\ny = 1\n", lex('python')).damage, 1);
  assert.equal(openTail('x = "abc', lex('go')).damage, 1);
  // Lenient: a closer that skips open brackets closes them too.
  assert.deepEqual(openTail('f(a[1)', lex('javascript')), { closers: [], inside: null, damage: 0, lastStrayCloser: -1 });
  assert.deepEqual(openTail('f(a[1}', lex('javascript')), { closers: [']', ')'], inside: null, damage: 1, lastStrayCloser: 5 });
});

test('openTail: lifetimes and digit separators are not quotes; char literals are', () => {
  assert.deepEqual(openTail("fn f<'a>(x: &'a str) -> usize {", lex('rust')).closers, ['}']);
  assert.deepEqual(openTail("int n = 1'000'000; f('(', '\\'', ", lex('cpp')).closers, [')']);
  assert.deepEqual(openTail("r := '{'; f(", lex('go')).closers, [')']);
});

test('openTail: a regular expression literal’s brackets and quotes are not code; a division is no literal', () => {
  assert.deepEqual(openTail('if (!/^[)\\]}"\'`;,\\s]+$/.test(rest)) return 1;\nf(', lex('typescript')), {
    closers: [')'],
    inside: null,
    damage: 0,
    lastStrayCloser: -1,
  });
  assert.deepEqual(openTail('return /[{(]/i.test(s) ? f(', lex('javascript')).closers, [')']);
  assert.deepEqual(openTail('const r = a / b; f(x / 2, [', lex('javascript')).closers, [']', ')']);
});

test('closingText: one closer a line; a multi-line string is closed only when asked', () => {
  const tail = openTail('f(`a (', lex('javascript'));
  assert.equal(closingText(tail, false), '\n)\n');
  assert.equal(closingText(tail, true), '\n`\n)\n');
  assert.equal(closingText(openTail('x = 1', lex('python')), true), '');
});

test('pointAt and editBetween: rows and columns in UTF-16 code units', () => {
  assert.deepEqual(pointAt('ab\ncé😀d\n', 7), { row: 1, column: 4 });
  assert.deepEqual(pointAt('ab', 0), { row: 0, column: 0 });
  assert.equal(editBetween('same', 'same'), null);
  assert.deepEqual(editBetween('a\nbc\nd', 'a\nbXYc\nd'), {
    startIndex: 3,
    oldEndIndex: 3,
    newEndIndex: 5,
    startPosition: { row: 1, column: 1 },
    oldEndPosition: { row: 1, column: 1 },
    newEndPosition: { row: 1, column: 3 },
  });
  // A window whose start moved down a line.
  assert.deepEqual(editBetween('x\ny\nz', 'y\nz'), {
    startIndex: 0,
    oldEndIndex: 2,
    newEndIndex: 0,
    startPosition: { row: 0, column: 0 },
    oldEndPosition: { row: 1, column: 0 },
    newEndPosition: { row: 0, column: 0 },
  });
});
