import type { Sampler } from './sampler';

/** The longest n-gram matched, and the shortest that counts: one token alone matches too much to mean a copy. */
const MAX_NGRAM = 4;
const MIN_NGRAM = 2;

/**
 * Copying at decode time: the token that followed the most recent earlier occurrence of the last 2-4 tokens (in
 * the prompt, its repository context included, or in what was generated) gets `bias` added to its logit, the way
 * prompt lookup drafts it. Code repeats its identifiers; a small model that reads them poorly is nudged to copy
 * them. Runs first in the chain, so the copied token can enter top-k.
 */
export function copyBias(bias: number): Sampler {
  return {
    name: `copy_bias(${bias})`,
    apply(c, ctx) {
      const id = nextAfterRepeat(ctx.history);
      if (id < 0) return;
      if (c.identity) {
        if (id < c.size) c.logits[id] += bias;
      } else {
        for (let i = 0; i < c.size; i++) if (c.ids[i] === id) c.logits[i] += bias;
      }
      c.sortedDesc = false;
    },
  };
}

/** Tokens of history searched (the end of the prompt and what was generated): bounds the cost per token. */
const SEARCHED = 8192;

/** The token after the latest earlier occurrence of the history's last n tokens (n from MAX_NGRAM down to MIN_NGRAM), or -1. */
export function nextAfterRepeat(history: ArrayLike<number>): number {
  const len = history.length;
  const lo = Math.max(0, len - SEARCHED);
  for (let n = Math.min(MAX_NGRAM, len - lo - 1); n >= MIN_NGRAM; n--) {
    for (let start = len - n - 1; start >= lo; start--) {
      let k = 0;
      while (k < n && history[start + k] === history[len - n + k]) k++;
      if (k === n) return history[start + n];
    }
  }
  return -1;
}
