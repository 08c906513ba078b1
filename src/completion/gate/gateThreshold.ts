import type { Calibration } from './calibration';

/**
 * The generic calibration (fitted on the bundled 7M model alone) also gates every model without its own: a
 * downloaded model, a server's. There it holds back only what it is very sure is wrong, whatever
 * ghostline.inline.minConfidence says, until the model is calibrated (Ghostline: Calibrate for This Workspace).
 * Measured with the generic calibration on the eval sets' gate samples (bench/results/gate-samples.*.jsonl,
 * the bundled model): below 0.02 it holds back 36% (held-out) and 49% (external) of suggestions, of which 1.7%
 * and 0% were right (1 of the 37 right ones and 0 of 67); at 0.05, 48% and 63%, losing 2.7% and 4.5% of the
 * right ones; at the default 0.1, 57% and 74%, losing 8.1% and 9.0%. A stronger model's right suggestions
 * score higher, so this bound loses fewer of them still.
 */
export const GENERIC_GATE_BOUND = 0.02;

/** The confidence a suggestion needs to be shown automatically, given the calibration that scores it. */
export function gateThreshold(calibration: Calibration | undefined, minConfidence: number): number {
  return calibration?.model === 'generic' ? Math.min(minConfidence, GENERIC_GATE_BOUND) : minConfidence;
}
