import type { Sampler } from './sampler';

/** Divides the logits by the temperature (> 0; temperature 0 is greedy and never reaches here). */
export function temperature(t: number): Sampler {
  return {
    name: `temperature(${t})`,
    apply(c) {
      const inv = 1 / t;
      for (let i = 0; i < c.size; i++) c.logits[i] *= inv;
    },
  };
}
