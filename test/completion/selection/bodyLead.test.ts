import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textSource } from '../../../src/completion/context/documentContext';
import { bodyLead, indentUnit } from '../../../src/completion/selection/bodyLead';
import { planGeneration } from '../../../src/completion/selection/plan';

/** The lead for a selection of whole lines `from`..`to` (0-based, inclusive) of `lines`. */
function leadFor(lines: string[], from: number, to: number, fallback?: string): string {
  const doc = textSource(lines.join('\n'));
  return bodyLead(doc, planGeneration(doc, { start: { line: from, character: 0 }, end: { line: to + 1, character: 0 } }), fallback);
}

test('after a docstring: a new line at the docstring, which sits in the body', () => {
  const lines = ['class Stack:', '    def push(self, x):', '        """Push x."""', '', '    def pop(self):', '        return self.items.pop()', ''];
  assert.equal(leadFor(lines, 1, 2), '\n        ');
});

test("after a line that opens a body: one unit deeper, the file's unit", () => {
  const two = ['function a(x) {', '  if (x) {', '    return 1;', '  }', '}', '', '/** Doubles. */', 'function double(x) {', '', 'module.exports = { a };'];
  assert.equal(leadFor(two, 6, 7), '\n  ');
  const four = ['def a(x):', '    if x:', '        return 1', '', 'def b(y):', ''];
  assert.equal(leadFor(four, 4, 4), '\n    ');
  const tabs = ['class A {', '\tf() {', '\t\treturn 1;', '\t}', '\tg() {', '}'];
  assert.equal(leadFor(tabs, 4, 4), '\n\t\t');
});

test("a doc comment's lines are not the unit; without evidence the editor's unit is used", () => {
  const lines = ['/**', ' * Adds.', ' * @param {number} a', ' */', 'function add(a, b) {', ''];
  assert.equal(indentUnit(textSource(lines.join('\n')), 4), null);
  assert.equal(leadFor(lines, 0, 4, '\t'), '\n\t');
  assert.equal(leadFor(lines, 0, 4), '\n    ');
});

test("after a block comment's last line: where its `/*` is, not its ` */`", () => {
  const lines = ['export const x = 1;', '', '/**', ' * Returns the sum of a and b.', ' */', '', 'export const y = 2;'];
  assert.equal(leadFor(lines, 2, 4), '\n');
});

test('no lead: a body that already has code, a partial block, code after the selection', () => {
  assert.equal(leadFor(['def f(x):', '    return x', ''], 0, 0), '');
  assert.equal(leadFor(['def f(x):', '    total = 0', '    for v in x:', ''], 0, 1), '');
  const doc = textSource('if (ok) { run(); }\n');
  assert.equal(bodyLead(doc, planGeneration(doc, { start: { line: 0, character: 0 }, end: { line: 0, character: 9 } })), '');
});
