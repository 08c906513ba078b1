import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { FilterContext } from '../../src/completion/filters/filterContext';
import { FILTERS, dropsEveryAnswerFrom, postProcess } from '../../src/completion/filters/pipeline';
import { ROOT } from '../helpers';

interface GoldenCase {
  name: string;
  text: string;
  ctx: Partial<FilterContext>;
  expected: string | null;
}

const GOLDEN = path.join(ROOT, 'test', 'completion', 'golden');
const ctxOf = (c: Partial<FilterContext>): FilterContext => ({ linePrefix: '', lineSuffix: '', nextLines: [], lineAbove: '', indent: '', ...c });

for (const [name, filter] of FILTERS) {
  test(`golden: ${name}`, () => {
    const file = path.join(GOLDEN, `${name}.json`);
    assert.ok(fs.existsSync(file), `every filter has a golden file: ${file}`);
    const cases = JSON.parse(fs.readFileSync(file, 'utf8')) as GoldenCase[];
    assert.ok(cases.length >= 4);
    for (const c of cases) assert.equal(filter(c.text, ctxOf(c.ctx)), c.expected, c.name);
  });
}

test('the pipeline: a block completion from a whitespace-only line in a function', () => {
  const ctx = ctxOf({ linePrefix: '    ', indent: '    ', nextLines: ['', 'def other():'].filter(Boolean) });
  const raw = 'if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\ndef other():\n    pass\n';
  assert.equal(postProcess(raw, ctx), 'if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)');
});

test('a first line cut to nothing by a prefix cut drops every answer it begins; other drops say nothing of the answer', () => {
  const inBlock = ctxOf({ linePrefix: '    ', indent: '    ', lineAbove: '    total = x + 1', finishReason: 'stop' });
  const js = ctxOf({ linePrefix: '  ', indent: '  ', lineAbove: '  const y = x;', openAtCursor: ['}'], closedAfterCursor: 1, finishReason: 'stop' });
  const cases: [string, FilterContext, string, boolean][] = [
    // The model leaves the function the cursor is in: the next top-level statement.
    ['\nprint(f(1))', inBlock, '\nprint(f(2))\n', true],
    // It closes the block the document already closes below the cursor.
    ['}', js, '\nfunction g() {}\n', true],
    ['};', js, '\n', true],
    // A line worth showing.
    ['return y', inBlock, '\n', false],
    // Dropped, but as a repeat of the line above: not a cut, so the answer is waited for.
    ['total = x + 1', inBlock, '\n    return total', false],
  ];
  for (const [first, ctx, rest, final] of cases) {
    assert.equal(dropsEveryAnswerFrom(first, ctx), final, JSON.stringify(first));
    if (final) assert.equal(postProcess(first + rest, ctx), null, `${JSON.stringify(first + rest)} is dropped too`);
  }
  assert.equal(postProcess('total = x + 1', inBlock), null, 'the repeat is dropped, by another filter');
});
