import type { Candidates } from './candidates';
import type { Prng } from './prng';

export interface SamplingContext {
  /** Token ids seen so far (prompt and generated), oldest first. */
  history: ArrayLike<number>;
  rng: Prng;
}

/** One stage of the chain: transforms the candidates in place (llama.cpp's uniform sampler interface). */
export interface Sampler {
  readonly name: string;
  apply(c: Candidates, ctx: SamplingContext): void;
}
