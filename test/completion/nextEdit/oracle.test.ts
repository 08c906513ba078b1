import * as assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { type NextEditCase, readNextEditCases } from '../../../bench/nextEdit/cases';
import {
  type CaseRecord,
  oracleGenerator,
  reachOf,
  runCases,
  streamingOracleGenerator,
  tally,
  unchangedWindowGenerator,
} from '../../../bench/nextEdit/evaluate';
import { isTooLarge } from '../../../src/completion/nextEdit/checkEdits';

// The oracle check of `npm run eval:next-edit` over the frozen set bench/nextEdit/cases.jsonl: a generator that
// answers with the true updated window goes through the whole request (history, prompt, parsing, checks), and
// what is shown must turn each case's `before` into exactly its `after`.

let cases: NextEditCase[];
let oracle: CaseRecord[];

before(async () => {
  cases = readNextEditCases();
  oracle = await runCases(cases, oracleGenerator);
});

test('the frozen set has at least 150 cases, in Python and TypeScript/JavaScript, each consistent', () => {
  assert.ok(cases.length >= 150, `${cases.length} cases`);
  const languages = new Set(cases.map((c) => c.language));
  assert.ok(languages.has('python'));
  assert.ok(languages.has('typescript') && languages.has('javascript'));
  assert.ok(new Set(cases.map((c) => c.repo)).size >= 4);
  for (const c of cases) {
    assert.equal(c.change.documentTextAfter, c.before);
    assert.ok(c.before.startsWith(c.change.insertedText, c.change.offset), c.id);
    assert.equal(c.cursorOffset, c.change.offset + c.change.insertedText.length, c.id);
    assert.notEqual(c.after, c.before, c.id);
  }
  assert.equal(new Set(cases.map((c) => c.id)).size, cases.length, 'ids are unique');
});

test('the oracle: every in-window case is shown unchanged, or rejected by the tooLarge rule on the true window', () => {
  const t = tally(oracle);
  assert.ok(t.inWindow >= 150, `${t.inWindow} in-window cases`);
  assert.equal(t.shownDifferent, 0, 'a shown edit that is not the true one');
  for (const [i, r] of oracle.entries()) {
    if (r.reach !== 'inside' || (r.result.kind === 'shown' && r.result.exact)) continue;
    const reach = reachOf(cases[i]);
    assert.ok(reach.kind === 'inside');
    assert.equal(r.result.kind === 'dropped' && r.result.reason, 'tooLarge', r.id);
    assert.ok(isTooLarge(reach.window.text, reach.trueWindowText), `${r.id}: dropped as tooLarge, but the rule says the true window is not too large`);
  }
});

test('the oracle shows at least 99% of the in-window cases unchanged', () => {
  const t = tally(oracle);
  assert.ok(t.shownExact >= 0.99 * t.inWindow, `${t.shownExact} of ${t.inWindow} shown unchanged`);
});

test('a wrong oracle (the window answered unchanged) loses every case as noChange: the check can fail', async () => {
  const t = tally(await runCases(cases, unchangedWindowGenerator));
  assert.equal(t.shown, 0);
  assert.equal(t.shownExact, 0);
  assert.equal(t.lossesInWindow.noChange, t.inWindow);
  assert.ok(t.shownExact < 0.99 * t.inWindow);
});

test('streamed and stopped once it rejoins the window: the same edits shown, and less of the answer written', async (t) => {
  const written = { chars: 0, of: 0 };
  const streamed = tally(await runCases(cases, (c) => streamingOracleGenerator(c, written)));
  const whole = tally(oracle);
  assert.equal(streamed.shownDifferent, 0, 'stopping early changed a shown edit');
  assert.ok(streamed.shownExact >= 0.99 * streamed.inWindow, `${streamed.shownExact} of ${streamed.inWindow}`);
  assert.ok(streamed.shownExact >= whole.shownExact - Math.ceil(0.01 * whole.inWindow));
  assert.ok(written.chars < written.of, 'nothing was stopped early');
  t.diagnostic(
    `streamed ${written.chars} of ${written.of} answer characters (${((100 * written.chars) / written.of).toFixed(1)}%); shown unchanged ${streamed.shownExact}/${streamed.inWindow}`,
  );
});
