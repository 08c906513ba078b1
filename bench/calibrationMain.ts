// npm run gen:calibration [-- --model DIR]: fits the confidence gate from `npm run eval:quality`'s samples
// (bench/results/gate-samples.<set>.jsonl, run with --no-calibration so nothing is gated by an old fit; the frozen
// split's file, were one there, is skipped: nothing is tuned on it, see bench/qualityMain.ts).
//  - the model's calibration: every feature, fitted on all sets -> <model>/ghostline-calibration.json
//  - the generic calibration for models without one: the model-agnostic features only (no language
//    terms) -> src/completion/gate/genericCalibration.ts
// It also cross-fits (fit on one set, measure on the other), the honest numbers for the README, and
// times the gate (features + score) per suggestion.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CALIBRATION_FILE, confidence, type Calibration } from '../src/completion/gate/calibration';
import { FEATURE_NAMES, type FeatureName } from '../src/completion/gate/features';
import { fitLogistic } from '../src/completion/gate/fitLogistic';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import type { GateSample } from './gateSample';
import { gateCurve, THRESHOLDS } from './qualityMetrics';
import { median, percentile, round } from './stats';

/**
 * The frozen test split (bench/qualityMain.ts, tools/model/README.md): reported only, never fitted on. eval:quality writes
 * no gate samples for it; a stale or hand-made gate-samples.frozen.jsonl is skipped too. (Not imported from
 * quality.ts: loading that module runs the eval.)
 */
const FROZEN_SET = 'frozen';

const GENERIC: FeatureName[] = FEATURE_NAMES.filter((f) => !f.startsWith('lang_'));
/** L2 strength on standardised features: a few hundred samples, so keep the weights modest. */
const L2 = 4;

function fit(samples: GateSample[], features: FeatureName[], model: string, fitted: Record<string, unknown>): Calibration {
  const xs = samples.map((s) => features.map((f) => s.features![f]));
  const ys = samples.map((s) => (s.exact ? 1 : 0));
  const r = fitLogistic(xs, ys, L2);
  const r6 = (v: number) => round(v, 6);
  return { version: 1, model, features, mean: r.mean.map(r6), scale: r.scale.map(r6), weights: r.weights.map(r6), bias: r6(r.bias), fitted };
}

/** Mean log-loss and the Brier score of a calibration on samples (lower is better). */
function scores(cal: Calibration, samples: GateSample[]) {
  let ll = 0;
  let brier = 0;
  for (const s of samples) {
    const p = Math.min(1 - 1e-6, Math.max(1e-6, confidence(cal, s.features as Record<FeatureName, number>)));
    const y = s.exact ? 1 : 0;
    ll -= y * Math.log(p) + (1 - y) * Math.log(1 - p);
    brier += (p - y) ** 2;
  }
  return { log_loss: round(ll / samples.length, 4), brier: round(brier / samples.length, 4) };
}

/** The curve of a calibration on a set: over all positions of the set, including those with no suggestion. */
function curveOn(cal: Calibration, all: GateSample[]) {
  const pts = all.map((s) => ({ confidence: s.suggested && s.features ? confidence(cal, s.features as Record<FeatureName, number>) : null, exact: s.exact }));
  return gateCurve(pts, all.length, THRESHOLDS).map((p) => ({ threshold: p.threshold, shown: round(p.shown, 4), precision: round(p.precision, 4) }));
}

function main() {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--model');
  const root = packageRoot(__dirname);
  const modelDir = i >= 0 ? argv[i + 1] : defaultModelDir(root);
  const resultsDir = path.join(root, 'bench', 'results');
  const files = fs.readdirSync(resultsDir).filter((f) => /^gate-samples\..+\.jsonl$/.test(f) && f !== `gate-samples.${FROZEN_SET}.jsonl`);
  if (files.length === 0) throw new Error('no gate samples: run `npm run eval:quality -- --no-calibration` first');
  const sets = new Map<string, GateSample[]>();
  for (const f of files) {
    const rows = fs
      .readFileSync(path.join(resultsDir, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as GateSample);
    sets.set(rows[0].set, rows);
  }
  const scored = (rows: GateSample[]) => rows.filter((r) => r.suggested && r.features);
  const everything = [...sets.values()].flat();
  const model = path.basename(modelDir);
  const date = new Date().toISOString().slice(0, 10);

  // Cross-fitting: each set measured with a gate fitted on the others only.
  const cross: Record<string, unknown> = {};
  if (sets.size > 1) {
    for (const [name, rows] of sets) {
      const others = [...sets.entries()].filter(([n]) => n !== name).flatMap(([, r]) => scored(r));
      const cal = fit(others, [...FEATURE_NAMES], model, {});
      const generic = fit(others, GENERIC, 'generic', {});
      cross[name] = {
        fitted_on: [...sets.keys()].filter((n) => n !== name),
        model: { ...scores(cal, scored(rows)), curve: curveOn(cal, rows) },
        generic: { ...scores(generic, scored(rows)), curve: curveOn(generic, rows) },
      };
    }
  }

  const meta = {
    date,
    data: [...sets.keys()],
    samples: scored(everything).length,
    positive_rate: round(scored(everything).filter((s) => s.exact).length / scored(everything).length, 4),
    l2: L2,
  };
  const cal = fit(scored(everything), [...FEATURE_NAMES], model, { ...meta, by: 'npm run gen:calibration' });
  const generic = fit(scored(everything), GENERIC, 'generic', { ...meta, model_data_from: model, by: 'npm run gen:calibration' });
  fs.writeFileSync(path.join(modelDir, CALIBRATION_FILE), `${JSON.stringify(cal, null, 2)}\n`);
  const genericFile = path.join(root, 'src', 'completion', 'gate', 'genericCalibration.ts');
  fs.writeFileSync(
    genericFile,
    '// Written by `npm run gen:calibration`: the gate for models without their own ghostline-calibration.json.\n' +
      "// Model-agnostic features only (the model's token log-probabilities and the cursor's shape), fitted on the default model.\n" +
      "import type { Calibration } from './calibration';\n\n" +
      `export const GENERIC_CALIBRATION: Calibration = ${JSON.stringify(generic, null, 2)};\n`,
  );

  // The gate's cost per suggestion (features + score), over every scored sample.
  const times: number[] = [];
  for (let rep = 0; rep < 20; rep++)
    for (const s of scored(everything)) {
      const t0 = performance.now();
      confidence(cal, s.features as Record<FeatureName, number>);
      times.push(performance.now() - t0);
    }
  const report = {
    ...meta,
    model,
    in_sample: Object.fromEntries([...sets].map(([n, rows]) => [n, { ...scores(cal, scored(rows)), curve: curveOn(cal, rows) }])),
    cross_fitted: cross,
    score_ms: { median: round(median(times), 5), p95: round(percentile(times, 95), 5) },
  };
  fs.writeFileSync(path.join(resultsDir, 'calibration.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${path.join(modelDir, CALIBRATION_FILE)} and ${path.relative(root, genericFile)}`);
  console.log(JSON.stringify({ ...meta, score_ms: report.score_ms }, null, 2));
  for (const [name, c] of Object.entries(cross) as [string, { model: { curve: { threshold: number; shown: number; precision: number }[] } }][]) {
    console.log(`\ncross-fitted on ${name}:\n| min confidence | shown | precision |\n|---|---|---|`);
    for (const p of c.model.curve) console.log(`| ${p.threshold} | ${(p.shown * 100).toFixed(1)}% | ${(p.precision * 100).toFixed(1)}% |`);
  }
}

main();
