import type { Sampler } from './sampler';

/**
 * CTRL-style repetition penalty over the last `window` tokens: a positive logit is divided by the
 * penalty, a negative one multiplied, so a repeated token always loses probability.
 */
export function repetitionPenalty(penalty: number, window: number): Sampler {
  return {
    name: `repetition_penalty(${penalty})`,
    apply(c, ctx) {
      const h = ctx.history;
      const seen = new Set<number>();
      for (let i = Math.max(0, h.length - window); i < h.length; i++) seen.add(h[i]);
      if (seen.size === 0) return;
      const penalise = (i: number) => {
        const l = c.logits[i];
        c.logits[i] = l > 0 ? l / penalty : l * penalty;
      };
      if (c.identity) {
        for (const id of seen) if (id < c.size) penalise(id);
      } else {
        for (let i = 0; i < c.size; i++) if (seen.has(c.ids[i])) penalise(i);
      }
      c.sortedDesc = false;
    },
  };
}
