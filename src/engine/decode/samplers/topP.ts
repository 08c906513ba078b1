import { topIndices } from './candidates';
import type { Sampler } from './sampler';

/**
 * Nucleus sampling: keeps the smallest set of most likely tokens whose probability reaches p.
 * Without an earlier top-k, the best candidates are selected in growing batches (64, 256, ...)
 * so a 150k vocabulary is never fully sorted when the nucleus is small, as it nearly always is.
 */
export function topP(p: number): Sampler {
  return {
    name: `top_p(${p})`,
    apply(c) {
      if (p >= 1) return;
      const lse = c.logSumExp();
      for (let take = Math.min(c.size, 64); ; take = Math.min(c.size, take * 4)) {
        const order = c.sortedDesc ? null : topIndices(c.logits, c.size, take);
        let cum = 0;
        for (let i = 0; i < take; i++) {
          cum += Math.exp(c.logits[order ? order[i] : i] - lse);
          if (cum >= p) {
            if (order) c.select(order, i + 1);
            else c.truncate(i + 1);
            return;
          }
        }
        if (take >= c.size) return; // float rounding: the whole set is the nucleus
      }
    },
  };
}
