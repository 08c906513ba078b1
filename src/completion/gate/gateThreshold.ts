import type { Calibration } from './calibration';

/**
 * The generic calibration (fitted on the bundled 7M model alone) also gates every model without its own: a
 * downloaded model, a server's. There it holds back only what it is very sure is wrong, whatever
 * ghostline.inline.minConfidence says, until the model is calibrated (Ghostline: Calibrate for This Workspace).
 * Measured with the generic calibration on the tuned-on sets' gate samples (bench/results/gate-samples.*.jsonl,
 * the bundled model; the frozen split is never read): below 0.02 it holds back 28% (held-out), 44% (external) and
 * 30% (code after the cursor) of the suggestions, of which 1 of the 37, 0 of the 69 and 0 of the 36 right ones;
 * at the default 0.1 it would hold back 55%, 73% and 62%, losing 2.7%, 10.1% and 16.7% of the right ones. A
 * stronger model's right suggestions score higher, so this bound loses fewer of them still.
 */
export const GENERIC_GATE_BOUND = 0.02;

/** The confidence a suggestion needs to be shown automatically, given the calibration that scores it. */
export function gateThreshold(calibration: Calibration | undefined, minConfidence: number): number {
  return calibration?.model === 'generic' ? Math.min(minConfidence, GENERIC_GATE_BOUND) : minConfidence;
}
