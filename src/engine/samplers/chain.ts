import type { DecodeOptions } from '../decodeOptions';
import { Candidates } from './candidates';
import { minP } from './minP';
import { repetitionPenalty } from './repetitionPenalty';
import type { Sampler, SamplingContext } from './sampler';
import { temperature } from './temperature';
import { topK } from './topK';
import { topP } from './topP';

/**
 * The sampler chain, in this fixed order:
 *   repetition penalty -> temperature -> top-k -> top-p -> min-p -> draw
 * At temperature 0 the chain is repetition penalty -> argmax (greedy): the filters cannot change the argmax.
 * Stages that would do nothing (top-k 0, top-p 1, min-p 0, penalty 1) are left out.
 */
export class SamplerChain {
  readonly stages: Sampler[] = [];
  readonly greedy: boolean;
  private candidates: Candidates | null = null;

  constructor(opts: Pick<DecodeOptions, 'temperature' | 'topK' | 'topP' | 'minP' | 'repetitionPenalty' | 'repetitionWindow'>) {
    this.greedy = opts.temperature === 0;
    if (opts.repetitionPenalty !== 1) this.stages.push(repetitionPenalty(opts.repetitionPenalty, opts.repetitionWindow));
    if (!this.greedy) {
      this.stages.push(temperature(opts.temperature));
      if (opts.topK > 0) this.stages.push(topK(opts.topK));
      if (opts.topP < 1) this.stages.push(topP(opts.topP));
      if (opts.minP > 0) this.stages.push(minP(opts.minP));
    }
  }

  describe(): string {
    return [...this.stages.map((s) => s.name), this.greedy ? 'argmax' : 'draw'].join(' -> ');
  }

  /** Runs the filters on one row of logits and leaves the surviving candidates (for tests and n-best). */
  filter(row: ArrayLike<number>, ctx: SamplingContext): Candidates {
    if (!this.candidates || this.candidates.capacity !== row.length) this.candidates = new Candidates(row.length);
    const c = this.candidates.reset(row);
    for (const stage of this.stages) stage.apply(c, ctx);
    return c;
  }

  /** Picks the next token id from one row of logits. */
  sample(row: ArrayLike<number>, ctx: SamplingContext): number {
    const c = this.filter(row, ctx);
    if (this.greedy || c.size === 1) return c.argmaxId();
    return draw(c, ctx.rng.next());
  }
}

/** Draws from softmax(logits) of the candidates with a uniform number u in [0, 1). */
export function draw(c: Candidates, u: number): number {
  const m = c.maxLogit();
  let total = 0;
  for (let i = 0; i < c.size; i++) total += Math.exp(c.logits[i] - m);
  let target = u * total;
  for (let i = 0; i < c.size; i++) {
    target -= Math.exp(c.logits[i] - m);
    if (target < 0) return c.ids[i];
  }
  return c.ids[c.size - 1];
}
