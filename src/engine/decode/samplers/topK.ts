import type { Sampler } from './sampler';

/** Keeps the k most likely tokens (partial selection, sorted highest first). */
export function topK(k: number): Sampler {
  return {
    name: `top_k(${k})`,
    apply(c) {
      c.keepTop(k);
    },
  };
}
