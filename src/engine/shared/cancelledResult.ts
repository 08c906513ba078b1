import type { GenerateResult, GenerationStats } from './types';

/** Statistics of no work at all: the start of every result's counts. */
export function emptyStats(): GenerationStats {
  return {
    promptTokens: 0,
    reusedTokens: 0,
    prefillTokens: 0,
    generatedTokens: 0,
    truncatedTokens: 0,
    prefillMs: 0,
    decodeMs: 0,
    totalMs: 0,
    draftTokens: 0,
    acceptedDraftTokens: 0,
  };
}

/** The answer to a request cancelled before the model ran for it. */
export function cancelledResult(): GenerateResult {
  const seq = { text: '', finishReason: 'cancelled' as const, logprob: NaN, tokens: [], tokenLogprobs: [], tokenTextEnds: [] };
  return { ...seq, sequences: [seq], stats: emptyStats() };
}
