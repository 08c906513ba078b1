import type { WindowBudget } from './documentContext';

/**
 * Characters per token assumed when fitting text to a model's context without its tokenizer (which lives in
 * the worker). Code BPE vocabularies give 3-4; a low guess keeps the prompt inside the context, so the
 * engine never has to cut its start (which would drop the FIM marker).
 */
export const CHARS_PER_TOKEN = 2.8;

/** Characters kept free for the cursor line, which the prefix budget does not count. */
export const CURSOR_LINE_CHARS = 240;

/**
 * Shrinks the character budgets so prefix + suffix + extra context fit the model's context after room for
 * the generated tokens: the prefix keeps 3/4 of what is left, the suffix 1/4 (llama.cpp's split).
 */
export function fitBudget(b: WindowBudget, extraChars: number, contextTokens: number, maxNewTokens: number): { budget: WindowBudget; extraChars: number } {
  // Room for the cursor line (not part of the prefix budget) and the FIM markers.
  const available = Math.max(64, contextTokens - maxNewTokens - 16) * CHARS_PER_TOKEN - CURSOR_LINE_CHARS;
  const wanted = b.prefixChars + b.suffixChars + extraChars;
  if (wanted <= available) return { budget: b, extraChars };
  const extra = Math.min(extraChars, Math.floor(available / 4));
  const rest = available - extra;
  return {
    budget: { ...b, prefixChars: Math.min(b.prefixChars, Math.floor(rest * 0.75)), suffixChars: Math.min(b.suffixChars, Math.floor(rest * 0.25)) },
    extraChars: extra,
  };
}
