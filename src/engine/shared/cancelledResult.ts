import type { GenerateResult } from './types';

/** The answer to a request cancelled before the model ran for it. */
export function cancelledResult(): GenerateResult {
  const stats = {
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
  const seq = { text: '', finishReason: 'cancelled' as const, logprob: NaN, tokens: [], tokenLogprobs: [], tokenTextEnds: [] };
  return { ...seq, sequences: [seq], stats };
}
