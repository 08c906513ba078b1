import type { DecodeOptions } from '../../shared/decodeOptions';
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

/** Outcome of checking one draft token: kept, or replaced by `id`. */
export interface DraftVerdict {
  accepted: boolean;
  /** The token to emit: the draft token when accepted, otherwise its replacement. */
  id: number;
}

/**
 * Speculative sampling against a deterministic draft (prompt lookup proposes one token with certainty):
 * keep the draft token d with probability p(d), otherwise draw from p with d removed, renormalised.
 * The emitted token is then distributed exactly as p (Leviathan et al. 2023 with q a point mass), so
 * speculation changes speed, never the distribution. Greedy: keep d iff it is the argmax.
 */
export function verifyDraft(chain: SamplerChain, row: ArrayLike<number>, draftId: number, ctx: SamplingContext): DraftVerdict {
  const c = chain.filter(row, ctx);
  if (chain.greedy || c.size === 1) {
    const id = c.argmaxId();
    return { accepted: id === draftId, id };
  }
  const m = c.maxLogit();
  let total = 0;
  let pDraft = 0;
  for (let i = 0; i < c.size; i++) {
    const w = Math.exp(c.logits[i] - m);
    total += w;
    if (c.ids[i] === draftId) pDraft = w;
  }
  if (pDraft > 0 && ctx.rng.next() * total < pDraft) return { accepted: true, id: draftId };
  // Draw from the residual: the same walk as draw(), skipping d.
  let target = ctx.rng.next() * (total - pDraft);
  let last = -1;
  for (let i = 0; i < c.size; i++) {
    if (c.ids[i] === draftId) continue;
    last = c.ids[i];
    target -= Math.exp(c.logits[i] - m);
    if (target < 0) return { accepted: false, id: last };
  }
  return { accepted: false, id: last };
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
