import { type Calibration, confidence } from '../gate/calibration';
import { FEATURE_NAMES, type FeatureName } from '../gate/features';
import { fitLogistic } from '../gate/fitLogistic';
import { gateThreshold } from '../gate/gateThreshold';
import { type CurvePoint, gateCurve, THRESHOLDS } from './keptMatch';

/** One completed position: the gate's inputs for the suggestion (null: none came), and whether it was the rest of the line. */
export interface CalibrationSample {
  /** Which file it came from: the cross-fit splits by file, so a file's lines never sit on both sides. */
  path: string;
  features: Record<FeatureName, number> | null;
  exact: boolean;
}

export interface WorkspaceCalibrationReport {
  model: string;
  date: string;
  positions: number;
  files: number;
  suggested: number;
  right: number;
  /** The threshold in use (ghostline.inline.minConfidence), and what it gives with each calibration. */
  threshold: number;
  /** Fitted on one half of the files and measured on the other, both ways: numbers that were not fitted to. */
  own: { shown: number; precision: number };
  /** The calibration the model had before (generic or its folder's), on the same positions. */
  before: { source: string; shown: number; precision: number };
  curve: { own: CurvePoint[]; before: CurvePoint[] };
  /** Which calibration the model uses after the command, and why (keepBetterFit). */
  inUse: 'own' | 'before';
  why: string;
}

/** Precision within this of the one before counts as equal (a few positions either way on a workspace's sample). */
const PRECISION_TOLERANCE = 0.005;

/**
 * The workspace's fit is adopted only when it is not worse at the threshold in use: its (cross-fitted) precision
 * is at least the calibration's before, which is what the gate is for (suggestions worth Tab). Showing more at
 * a lower precision is the threshold's trade-off to make, not the fit's.
 */
export function keepBetterFit(
  own: { shown: number; precision: number },
  before: { shown: number; precision: number; source: string },
): Pick<WorkspaceCalibrationReport, 'inUse' | 'why'> {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  if (own.shown > 0 && own.precision >= before.precision - PRECISION_TOLERANCE)
    return {
      inUse: 'own',
      why: `this workspace's fit is at least as precise at the threshold in use (${pct(own.precision)} against ${pct(before.precision)}, showing ${pct(own.shown)} against ${pct(before.shown)})`,
    };
  return {
    inUse: 'before',
    why: `this workspace's fit is less precise at the threshold in use (${pct(own.precision)} against ${pct(before.precision)} for ${before.source}), so the model keeps ${before.source}`,
  };
}

/** Fewer than this many suggestions, or right or wrong ones, fit nothing worth trusting. */
export const MIN_SUGGESTED = 40;
const MIN_EACH = 8;
/** L2 strength on standardised features (as `npm run gen:calibration`): a few hundred samples keep the weights modest. */
const L2 = 4;

/** Why these samples cannot be fitted, or null. */
export function tooFew(samples: readonly CalibrationSample[]): string | null {
  const scored = samples.filter((s) => s.features);
  const right = scored.filter((s) => s.exact).length;
  if (scored.length < MIN_SUGGESTED || right < MIN_EACH || scored.length - right < MIN_EACH)
    return `${scored.length} suggestions (${right} right) on ${samples.length} positions: calibration needs at least ${MIN_SUGGESTED} suggestions with ${MIN_EACH} right and ${MIN_EACH} wrong (more files, or a stronger model)`;
  return null;
}

function fitCalibration(samples: readonly CalibrationSample[], model: string, fitted: Record<string, unknown> = {}): Calibration {
  const scored = samples.filter((s) => s.features);
  const features = [...FEATURE_NAMES];
  const r = fitLogistic(
    scored.map((s) => features.map((f) => s.features![f])),
    scored.map((s) => (s.exact ? 1 : 0)),
    L2,
  );
  const r6 = (v: number) => Math.round(v * 1e6) / 1e6;
  return { version: 1, model, features, mean: r.mean.map(r6), scale: r.scale.map(r6), weights: r.weights.map(r6), bias: r6(r.bias), fitted };
}

const score = (cal: Calibration, s: CalibrationSample) => (s.features ? confidence(cal, s.features) : null);

/** Shown and precision at `threshold` over all positions (a position with no suggestion counts as not shown). */
function at(points: { confidence: number | null; exact: boolean }[], threshold: number) {
  const [p] = gateCurve(points, points.length, [threshold]);
  return { shown: p.shown, precision: p.precision };
}

/**
 * The workspace's calibration (fitted on every sample) and its report. The report's numbers for it are
 * cross-fitted: files split in two by path, each half scored by a calibration fitted on the other.
 */
export function fitWorkspace(
  samples: readonly CalibrationSample[],
  model: string,
  threshold: number,
  before: { calibration: Calibration | undefined; source: string },
): { calibration: Calibration; report: WorkspaceCalibrationReport } {
  const problem = tooFew(samples);
  if (problem) throw new Error(problem);
  const date = new Date().toISOString();
  const files = [...new Set(samples.map((s) => s.path))].sort();
  const half = new Set(files.filter((_, i) => i % 2 === 0));
  const parts = [samples.filter((s) => half.has(s.path)), samples.filter((s) => !half.has(s.path))];
  const crossPoints = parts.flatMap((test, i) => {
    const train = parts[1 - i];
    // A half too small to fit scores with the whole fit (the report then says less than it seems).
    const cal = tooFew(train) ? fitCalibration(samples, model) : fitCalibration(train, model);
    return test.map((s) => ({ confidence: score(cal, s), exact: s.exact }));
  });
  const beforePoints = samples.map((s) => ({ confidence: before.calibration ? score(before.calibration, s) : s.features ? 1 : null, exact: s.exact }));
  const suggested = samples.filter((s) => s.features).length;
  const own = at(crossPoints, threshold);
  const beforeAt = { source: before.source, ...at(beforePoints, gateThreshold(before.calibration, threshold)) };
  const calibration = fitCalibration(samples, model, { by: 'Ghostline: Calibrate for This Workspace', date, positions: samples.length, suggested });
  return {
    calibration,
    report: {
      model,
      date,
      positions: samples.length,
      files: files.length,
      suggested,
      right: samples.filter((s) => s.features && s.exact).length,
      threshold,
      own,
      before: beforeAt,
      curve: { own: gateCurve(crossPoints, crossPoints.length, THRESHOLDS), before: gateCurve(beforePoints, beforePoints.length, THRESHOLDS) },
      ...keepBetterFit(own, beforeAt),
    },
  };
}
