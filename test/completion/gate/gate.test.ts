/** The confidence gate: features, fitting, calibration files, and the gate inside the completion pipeline. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { CompletionService } from '../../../src/completion/completionService';
import { positionAt, textSource } from '../../../src/completion/context/documentContext';
import { CALIBRATION_FILE, confidence, parseCalibration, type Calibration } from '../../../src/completion/gate/calibration';
import { FEATURE_NAMES, gateFeatures } from '../../../src/completion/gate/features';
import { fitLogistic, sigmoid } from '../../../src/completion/gate/fitLogistic';
import { GENERIC_CALIBRATION } from '../../../src/completion/gate/genericCalibration';
import { readCalibration } from '../../../src/completion/gate/readCalibration';
import { pickFimTemplate } from '../../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../../src/completion/settings';
import { FakeGenerator } from '../fakeGenerator';
import type { CompletionSettings } from '../../../src/completion/types';

test('features: the first line with code is scored by its own tokens, the cursor shape by the context', () => {
  // A block suggestion: "\n" (certain) then "    return a" (two tokens), then a second line.
  const f = gateFeatures({
    text: '\n    return a\nprint(1)',
    raw: '\n    return a\nprint(1)',
    tokenLogprobs: [-0.01, -2, -1, -0.5, -30],
    tokenTextEnds: [1, 11, 13, 14, 22],
    linePrefix: 'def f(a):',
    lineSuffix: '',
    lineAbove: 'import os',
    languageId: 'python',
  });
  assert.equal(f.first_line_mean_logprob, -1.5, 'only the two tokens of "    return a"');
  assert.equal(f.first_line_min_logprob, -2);
  assert.equal(f.first_token_logprob, -0.01);
  assert.equal(f.mean_logprob, (-0.01 - 2 - 1 - 0.5 - 12) / 5, 'an impossible token is clamped at -12');
  assert.equal(f.opener_on_line, 1);
  assert.equal(f.opener_above, 0);
  assert.equal(f.lang_python, 1);
  assert.equal(f.lang_js_ts, 0);
  assert.equal(f.cursor_in_word, 0, 'after ":"');
  assert.equal(Object.keys(f).length, FEATURE_NAMES.length);
  const blank = gateFeatures({
    text: 'x',
    raw: 'x',
    tokenLogprobs: [],
    tokenTextEnds: [],
    linePrefix: '    ',
    lineSuffix: ')',
    lineAbove: '  if (a) {',
    languageId: 'typescriptreact',
  });
  assert.equal(blank.opener_above, 1);
  assert.equal(blank.line_blank, 1);
  assert.equal(blank.code_after_cursor, 1);
  assert.equal(blank.lang_js_ts, 1);
  assert.equal(blank.first_line_mean_logprob, -12, 'no token evidence: the floor');
});

test('logistic regression recovers the weights that generated the labels', () => {
  // Deterministic pseudo-random data from known weights.
  let seed = 7;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const trueW = [2, -1, 0];
  const xs: number[][] = [];
  const ys: number[] = [];
  for (let i = 0; i < 4000; i++) {
    const x = [rand() * 2 - 1, rand() * 2 - 1, rand() * 2 - 1];
    xs.push(x);
    ys.push(rand() < sigmoid(0.5 + trueW[0] * x[0] + trueW[1] * x[1]) ? 1 : 0);
  }
  const r = fitLogistic(xs, ys, 0.01);
  // Weights are on standardised features: undo the scaling to compare.
  const w = r.weights.map((v, j) => v / r.scale[j]);
  assert.ok(Math.abs(w[0] - 2) < 0.3 && Math.abs(w[1] + 1) < 0.25 && Math.abs(w[2]) < 0.2, `weights ${w}`);
  // Perfectly separable data: L2 keeps the weights finite.
  const sep = fitLogistic([[0], [1], [2], [3]], [0, 0, 1, 1], 1);
  assert.ok(sep.weights.every(Number.isFinite) && Math.abs(sep.weights[0]) < 10);
  assert.throws(() => fitLogistic([], []), /no samples/);
});

const cal = (overrides: Partial<Calibration> = {}): Calibration => ({
  version: 1,
  model: 'test',
  features: ['first_line_mean_logprob'],
  mean: [-1],
  scale: [1],
  weights: [3],
  bias: 0,
  ...overrides,
});

test('calibration files are checked, and a broken one falls back to the generic calibration with one message', () => {
  assert.equal(confidence(cal(), { first_line_mean_logprob: -1 } as never), 0.5);
  assert.throws(() => parseCalibration([]), /not a JSON object/);
  assert.throws(() => parseCalibration({ ...cal(), version: 2 }), /unsupported version 2/);
  assert.throws(() => parseCalibration({ ...cal(), features: ['made_up'] }), /unknown feature "made_up"/);
  assert.throws(() => parseCalibration({ ...cal(), weights: [1, 2] }), /"weights" must be 1 finite numbers/);
  assert.throws(() => parseCalibration({ ...cal(), scale: [0] }), /"scale" must be positive/);
  assert.throws(() => parseCalibration({ ...cal(), bias: null }), /"bias"/);
  assert.doesNotThrow(() => parseCalibration(GENERIC_CALIBRATION));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-cal-'));
  assert.equal(readCalibration(dir).calibration, GENERIC_CALIBRATION, 'no file: generic');
  assert.equal(readCalibration(dir).problem, undefined, 'a missing file is normal, not a problem');
  fs.writeFileSync(path.join(dir, CALIBRATION_FILE), '{"version": 1, "features": [');
  const broken = readCalibration(dir);
  assert.equal(broken.calibration, GENERIC_CALIBRATION);
  assert.match(broken.problem ?? '', /ghostline-calibration\.json ignored: .*JSON.*using the generic calibration/);
  fs.writeFileSync(path.join(dir, CALIBRATION_FILE), JSON.stringify(cal({ bias: 1 })));
  assert.equal(readCalibration(dir).calibration.bias, 1);
});

test('the shipped model has a calibration of its own that parses', () => {
  const r = readCalibration(path.join(__dirname, '..', '..', '..', '..', 'models', 'ghostline-code-small'));
  assert.equal(r.problem, undefined);
  assert.notEqual(r.calibration, GENERIC_CALIBRATION);
  assert.equal(r.calibration.model, 'ghostline-code-small');
});

const template = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));
const request = (text: string, explicit = false) => ({
  doc: textSource(text),
  cursor: positionAt(text, text.length),
  languageId: 'python',
  path: 'a.py',
  explicit,
});

/**
 * The pipeline over a generator whose tokens all have log-probability `logprob`, gated by the test calibration:
 * it always answers `foo(1)`, or (`streamed`) streams what the test tells it to.
 */
function calibrated(logprob: number, settings: CompletionSettings, streamed = false): { gen: FakeGenerator; svc: CompletionService } {
  const gen = new FakeGenerator(streamed ? undefined : () => 'foo(1)', logprob);
  return {
    gen,
    svc: new CompletionService(
      gen,
      () => template,
      () => settings,
      () => ({ contextTokens: 1024, calibration: cal() }),
    ),
  };
}

test('the pipeline hides a suggestion below minConfidence, and an explicit trigger shows it anyway', async () => {
  const settings = { ...defaultCompletionSettings(), prefetch: false, minConfidence: 0.5 };
  const run = async (logprob: number) => {
    const { gen, svc } = calibrated(logprob, settings);
    return { svc, gen, out: await svc.complete(request('x = ')) };
  };
  const sure = await run(-0.05);
  assert.deepEqual(sure.out.items, ['foo(1)']);
  assert.ok(sure.out.confidence! > 0.9);
  assert.equal(sure.out.gated, false);

  const unsure = await run(-3);
  assert.deepEqual(unsure.out.items, []);
  assert.equal(unsure.out.gated, true);
  assert.ok(unsure.out.confidence! < 0.01);
  // The cached suggestion is still gated; the explicit trigger (which asks for alternatives) shows them.
  assert.equal(unsure.svc.peek(request('x = '))?.items.length, 0);
  const calls = unsure.gen.calls.length;
  const explicit = await unsure.svc.complete(request('x = ', true));
  assert.ok(explicit.items.includes('foo(1)'));
  assert.equal(explicit.gated, false);
  assert.equal(unsure.gen.calls.length, calls + 1, 'one more model call, for the alternatives');

  // Without a calibration nothing is gated.
  const plain = new CompletionService(
    new FakeGenerator(() => 'foo(1)', -9),
    () => template,
    () => settings,
    () => ({ contextTokens: 1024 }),
  );
  const out = await plain.complete(request('x = '));
  assert.deepEqual(out.items, ['foo(1)']);
  assert.equal(out.confidence, null);
});

test('no prefetch after a suggestion the gate held back (it will not be accepted)', async () => {
  const settings = { ...defaultCompletionSettings(), prefetch: true, minConfidence: 0.5 };
  for (const [logprob, calls] of [
    [-3, 1],
    [-0.05, 2],
  ] as const) {
    const { gen, svc } = calibrated(logprob, settings);
    await svc.complete(request('x = '));
    await svc.idle();
    assert.equal(gen.calls.length, calls, `logprob ${logprob}`);
  }
});

test('a block whose first line the gate holds back is not waited for: the generation stops there, and the place is remembered', async () => {
  const settings = { ...defaultCompletionSettings(), prefetch: false, minConfidence: 0.5 };
  const { gen, svc } = calibrated(-3, settings, true);
  const head = 'def f(x):\n    ';
  const pending = svc.complete(request(head));
  await new Promise((r) => setTimeout(r, 0));
  gen.calls[0].stream('y = x + 1\n    ret');
  const out = await pending;
  assert.deepEqual(out.items, [], 'held back');
  assert.equal(out.gated, true);
  assert.ok(out.confidence !== null && out.confidence < 0.5);
  assert.equal(out.fuller, undefined);
  assert.equal(gen.calls[0].signal?.aborted, true, 'the rest of the block is not written');
  assert.equal(svc.peek(request(head))?.gated, true, 'asked again here: held back at once, from the cache');
  assert.equal(gen.calls.length, 1);
  // A sure first line is shown at once and the block goes on (core.test.ts).
  const { gen: sure, svc: svc2 } = calibrated(-0.01, settings, true);
  const shown = svc2.complete(request(head));
  await new Promise((r) => setTimeout(r, 0));
  sure.calls[0].stream('y = x + 1\n    ret');
  assert.deepEqual((await shown).items, ['y = x + 1']);
  assert.equal(sure.calls[0].signal?.aborted, false);
  sure.calls[0].finish();
});
