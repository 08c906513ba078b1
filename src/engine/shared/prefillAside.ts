import type { DecodeOptions } from './decodeOptions';

/**
 * Generator.prefillAside on the local engine: a prefill that draws one greedy token from the prompt's logits (no
 * model pass after it). The engine keeps the caches of recent prompts (worker/keptCaches.ts), so the one in
 * use stays for a request that comes back to it.
 */
export const PREFILL_ASIDE_OPTIONS: Readonly<Partial<DecodeOptions>> = Object.freeze({
  maxNewTokens: 1,
  temperature: 0,
  tokenHealing: false,
  speculativeTokens: 0,
});

/**
 * A warm-up prefills in passes of this many tokens, so the keystroke that abandons it waits for one short pass
 * only (the engine checks for a cancel between passes; a request's own prefill uses the engine's chunk).
 */
export const PREFILL_ASIDE_CHUNK = 16;
