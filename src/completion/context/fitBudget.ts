import { STICKY_PREFIX_FACTOR, type WindowBudget } from './documentContext';

/**
 * Characters per token assumed when the model's tokenizer was not measured. Code BPE vocabularies give
 * 3-4; a low guess keeps the prompt inside the context, so the engine never has to cut its start (which
 * would drop the FIM marker).
 */
export const CHARS_PER_TOKEN = 2.8;

/**
 * Share of a measured characters-per-token ratio that is relied on: real files vary around the measured
 * sample (long identifiers, non-ASCII, dense punctuation). An overflow costs little: the engine then drops
 * the oldest prefix tokens (after the FIM marker) in steps that keep the KV cache stable.
 */
export const MEASURED_MARGIN = 0.95;

/** Characters kept free for the cursor line, which the prefix budget does not count. */
export const CURSOR_LINE_CHARS = 120;

/**
 * Shrinks the character budgets so prefix + suffix + extra context fit the model's context after room for
 * the generated tokens: the prefix keeps 3/4 of what is left, the suffix 1/4 (llama.cpp's split).
 */
export function fitBudget(
  b: WindowBudget,
  extraChars: number,
  contextTokens: number,
  maxNewTokens: number,
  measuredCharsPerToken?: number,
  /** Share of the available characters extra context keeps when everything does not fit (`ghostline.context.maxShare`). */
  extraShare = 0.25,
): { budget: WindowBudget; extraChars: number } {
  const perToken = measuredCharsPerToken && Number.isFinite(measuredCharsPerToken) ? measuredCharsPerToken * MEASURED_MARGIN : CHARS_PER_TOKEN;
  // Room for the cursor line (not part of the prefix budget) and the FIM markers.
  const available = Math.max(64, contextTokens - maxNewTokens - 16) * perToken - CURSOR_LINE_CHARS;
  const wanted = b.prefixChars + b.suffixChars + extraChars;
  let budget = b;
  let extra = extraChars;
  if (wanted > available) {
    extra = Math.min(extraChars, Math.floor(available * extraShare));
    const rest = available - extra;
    budget = { ...b, prefixChars: Math.min(b.prefixChars, Math.floor(rest * 0.75)), suffixChars: Math.min(b.suffixChars, Math.floor(rest * 0.25)) };
  }
  // A prefix that keeps an earlier start may grow past its budget, as far as the context has room.
  const room = Math.floor(available - budget.suffixChars - extra);
  const sticky = Math.max(budget.prefixChars, Math.min(Math.floor(budget.prefixChars * STICKY_PREFIX_FACTOR), room));
  return { budget: { ...budget, stickyPrefixChars: sticky }, extraChars: extra };
}
