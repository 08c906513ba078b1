import type { Sequence } from '../../engine/shared/types';
import type { DocumentContext } from '../types';
import { confidence, type Calibration } from './calibration';
import { gateFeatures, type FeatureName } from './features';

/** The estimated probability that `text` (the post-processed form of `seq`) is kept at this cursor, and the features behind it. */
export function scoreSuggestion(
  cal: Calibration,
  text: string,
  seq: Sequence,
  ctx: DocumentContext,
  languageId: string,
): { confidence: number; features: Record<FeatureName, number> } {
  const features = gateFeatures(gateInput(text, seq, ctx, languageId));
  return { confidence: confidence(cal, features), features };
}

function gateInput(text: string, seq: Sequence, ctx: DocumentContext, languageId: string) {
  return {
    text,
    raw: seq.text,
    tokenLogprobs: seq.tokenLogprobs ?? [],
    tokenTextEnds: seq.tokenTextEnds ?? [],
    linePrefix: ctx.linePrefix,
    lineSuffix: ctx.lineSuffix,
    lineAbove: ctx.lineAbove,
    languageId,
  };
}
