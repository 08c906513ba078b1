import type { DecodeOptions } from '../engine/shared/decodeOptions';

/**
 * Decode presets. package.json's settings defaults are checked against these by a test, so the two
 * never disagree.
 *
 * Inline completion: near-greedy (temperature 0.2, top-k 8, fixed seed: the same context gives the same
 * suggestion), no repetition penalty (code repeats itself legitimately), one line when there is text right
 * of the cursor, up to `blockLines` lines on an empty line or after a block opener, and a time budget that
 * applies once the first line is complete. Both presets draft up to 8 tokens by prompt lookup
 * (speculative sampling: the same distribution, about 1.5x faster decoding on real code), and heal the
 * prompt's last token (the first token generated must extend it: cursors split tokens).
 */
/** The decode knobs both presets have. */
export interface SamplingPreset {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  repetitionPenalty: number;
  maxNewTokens: number;
  timeBudgetMs: number;
  stop: string[];
  seed: number;
  /** Prompt-lookup speculative decoding: draft tokens verified per model pass (0: off). Speed only. */
  speculativeTokens: number;
  /** Token healing of the prompt's last token (the cursor often splits a token). */
  tokenHealing: boolean;
}

export interface InlinePreset extends SamplingPreset {
  /** Lines of a block suggestion at most. */
  blockLines: number;
}

export interface GeneratePreset extends SamplingPreset {
  /** 0: no line limit. */
  maxLines: number;
}

export const INLINE_PRESET: Readonly<InlinePreset> = Object.freeze({
  temperature: 0.2,
  topK: 8,
  topP: 0.95,
  minP: 0,
  repetitionPenalty: 1,
  maxNewTokens: 96,
  blockLines: 8,
  timeBudgetMs: 800,
  stop: [],
  seed: 0,
  speculativeTokens: 8,
  tokenHealing: true,
});

/**
 * Generate from Selection: a longer continuation for review, more varied (temperature 0.4, top-k 40,
 * top-p 0.95, min-p 0.05), a light repetition penalty against loops, no line limit.
 */
export const GENERATE_PRESET: Readonly<GeneratePreset> = Object.freeze({
  temperature: 0.4,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repetitionPenalty: 1.1,
  maxNewTokens: 256,
  maxLines: 0,
  timeBudgetMs: 20000,
  stop: [],
  seed: 0,
  speculativeTokens: 8,
  tokenHealing: true,
});


export type InlineMode = 'line' | 'block';

/** One line when code follows the cursor; a block on an empty line or after a block opener. */
export function inlineMode(linePrefix: string, lineSuffix: string): InlineMode {
  if (lineSuffix.trim() !== '') return 'line';
  if (linePrefix.trim() === '' || /[:{([]\s*$|=>\s*$/.test(linePrefix)) return 'block';
  return 'line';
}

export function inlineDecodeOptions(p: InlinePreset, mode: InlineMode, linePrefix: string): Partial<DecodeOptions> {
  // After a block opener the completion starts on the next line: the empty rest of the line counts as one.
  const startsOnNextLine = linePrefix.trim() !== '' && mode === 'block';
  return {
    temperature: p.temperature,
    topK: p.topK,
    topP: p.topP,
    minP: p.minP,
    repetitionPenalty: p.repetitionPenalty,
    maxNewTokens: p.maxNewTokens,
    maxLines: mode === 'line' ? 1 : p.blockLines + (startsOnNextLine ? 1 : 0),
    timeBudgetMs: p.timeBudgetMs,
    stop: p.stop,
    seed: p.seed,
    speculativeTokens: p.speculativeTokens,
    tokenHealing: p.tokenHealing,
  };
}
