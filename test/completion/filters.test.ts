import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { FilterContext } from '../../src/completion/filters/filterContext';
import { FILTERS, postProcess } from '../../src/completion/filters/pipeline';
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
