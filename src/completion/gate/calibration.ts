import { FEATURE_NAMES, type FeatureName } from './features';
import { dot, sigmoid } from './fitLogistic';

/**
 * A fitted confidence model: P(the user keeps the suggestion) = sigmoid(bias + w . (x - mean) / scale)
 * over the named features. Stored per model as `ghostline-calibration.json` next to its config.json.
 */
export interface Calibration {
  version: 1;
  /** The model it was fitted for ('generic': the fallback for models without a file). */
  model: string;
  features: FeatureName[];
  mean: number[];
  scale: number[];
  weights: number[];
  bias: number;
  /** How it was fitted (data, samples, date): for people, not read by the code. */
  fitted?: Record<string, unknown>;
}

export const CALIBRATION_FILE = 'ghostline-calibration.json';

/** Checks a parsed calibration file; throws an Error naming the first problem. */
export function parseCalibration(json: unknown): Calibration {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('not a JSON object');
  const c = json as Record<string, unknown>;
  if (c.version !== 1) throw new Error(`unsupported version ${JSON.stringify(c.version)} (expected 1)`);
  const features = c.features;
  if (!Array.isArray(features) || features.length === 0) throw new Error('"features" must be a non-empty list');
  for (const f of features) if (!(FEATURE_NAMES as readonly unknown[]).includes(f)) throw new Error(`unknown feature ${JSON.stringify(f)}`);
  for (const key of ['mean', 'scale', 'weights'] as const) {
    const v = c[key];
    if (!Array.isArray(v) || v.length !== features.length || !v.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw new Error(`"${key}" must be ${features.length} finite numbers`);
  }
  if ((c.scale as number[]).some((s) => s <= 0)) throw new Error('"scale" must be positive');
  if (typeof c.bias !== 'number' || !Number.isFinite(c.bias)) throw new Error('"bias" must be a finite number');
  return {
    version: 1,
    model: typeof c.model === 'string' ? c.model : 'unknown',
    features: features as FeatureName[],
    mean: c.mean as number[],
    scale: c.scale as number[],
    weights: c.weights as number[],
    bias: c.bias,
    fitted: typeof c.fitted === 'object' && c.fitted !== null ? (c.fitted as Record<string, unknown>) : undefined,
  };
}

/** The estimated probability that a suggestion with these features is kept. */
export function confidence(cal: Calibration, x: Record<FeatureName, number>): number {
  const z = cal.features.map((f, j) => (x[f] - cal.mean[j]) / cal.scale[j]);
  return sigmoid(cal.bias + dot(cal.weights, z));
}
