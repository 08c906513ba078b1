import type { Sampler } from './sampler';

/** Keeps tokens whose probability is at least p times that of the most likely token. */
export function minP(p: number): Sampler {
  return {
    name: `min_p(${p})`,
    apply(c) {
      c.keepAtLeast(c.maxLogit() + Math.log(p));
    },
  };
}
