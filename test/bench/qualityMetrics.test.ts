import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactRestOfLine, firstLine, firstWordRight, gateCurve } from '../../bench/qualityMetrics';
import { wilson } from '../../bench/stats';

test('a block suggestion is judged by its first line with code', () => {
  assert.equal(firstLine('\n    return a + b\n'), '    return a + b');
  assert.ok(exactRestOfLine('return a + b  \nprint(1)', 'return a + b'));
  assert.ok(!exactRestOfLine('return a', 'return a + b'));
});

test('the first word is what Ctrl+Right would accept', () => {
  assert.ok(firstWordRight('items.append(x)', 'items.pop()'), '"items" is right');
  assert.ok(!firstWordRight('item.append(x)', 'items.pop()'), '"item" is a different word');
  assert.ok(firstWordRight('(a, b)', '(x)'), 'a leading symbol run');
  assert.ok(!firstWordRight('', 'x'));
});

test('the gate curve counts shown suggestions over all positions', () => {
  const pts = [
    { confidence: 0.9, exact: true },
    { confidence: 0.6, exact: false },
    { confidence: 0.2, exact: true },
    { confidence: null, exact: false },
  ];
  const [all, mid, high] = gateCurve(pts, 5, [0, 0.5, 0.8]);
  assert.deepEqual(all, { threshold: 0, shown: 3 / 5, precision: 2 / 3 });
  assert.deepEqual(mid, { threshold: 0.5, shown: 2 / 5, precision: 1 / 2 });
  assert.deepEqual(high, { threshold: 0.8, shown: 1 / 5, precision: 1 });
});

test('precision intervals: Wilson 95%, narrower with more shown suggestions, within 0-1', () => {
  assert.deepEqual(wilson(50, 100), [0.4038, 0.5962]);
  const [lo66, hi66] = wilson(33, 66);
  assert.ok(hi66 - lo66 > 0.22 && hi66 - lo66 < 0.25, `n=66: about +-12 points, got ${lo66}-${hi66}`);
  assert.deepEqual(wilson(0, 10)[0], 0);
  assert.deepEqual(wilson(10, 10)[1], 1);
  assert.deepEqual(wilson(0, 0), [0, 1]);
});
