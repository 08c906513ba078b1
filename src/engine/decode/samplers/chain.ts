import type { DecodeOptions } from '../../shared/decodeOptions';
import { Candidates, argmaxOf } from './candidates';
import { copyBias } from './copyBias';
import { minP } from './minP';
import { repetitionPenalty } from './repetitionPenalty';
import type { Sampler, SamplingContext } from './sampler';
import { temperature } from './temperature';
import { topK } from './topK';
import { topP } from './topP';

/**
 * The sampler chain, in this fixed order:
 *   copy bias -> repetition penalty -> top-k -> temperature -> top-p -> min-p -> draw
 * Top-k runs before temperature: dividing by a positive temperature keeps the order of the logits, so the
 * same k survive, and only k of a 150k-wide row are divided. Without a repetition penalty, top-k reads the
 * model's row directly (no copy of the row).
 * At temperature 0 the chain is copy bias -> repetition penalty -> argmax (greedy): the filters cannot change
 * the argmax. Stages that would do nothing (copy bias 0, top-k 0, top-p 1, min-p 0, penalty 1) are left out.
 */
export class SamplerChain {
  readonly stages: Sampler[] = [];
  readonly greedy: boolean;
  /** k when top-k is the chain's first stage: then it selects straight from the row. */
  private readonly leadingTopK: number;
  private candidates: Candidates | null = null;

  constructor(
    opts: Pick<DecodeOptions, 'temperature' | 'topK' | 'topP' | 'minP' | 'repetitionPenalty' | 'repetitionWindow'> & Partial<Pick<DecodeOptions, 'copyBias'>>,
  ) {
    this.greedy = opts.temperature === 0;
    if (opts.copyBias) this.stages.push(copyBias(opts.copyBias));
    if (opts.repetitionPenalty !== 1) this.stages.push(repetitionPenalty(opts.repetitionPenalty, opts.repetitionWindow));
    const topKFirst = !this.greedy && opts.topK > 0 && this.stages.length === 0;
    this.leadingTopK = topKFirst ? opts.topK : 0;
    if (!this.greedy) {
      if (opts.topK > 0) this.stages.push(topK(opts.topK));
      this.stages.push(temperature(opts.temperature));
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
    const direct = this.leadingTopK > 0 && row instanceof Float32Array;
    const c = direct ? this.candidates.resetTop(row, this.leadingTopK) : this.candidates.reset(row);
    for (let i = direct ? 1 : 0; i < this.stages.length; i++) this.stages[i].apply(c, ctx);
    return c;
  }

  /** Picks the next token id from one row of logits. */
  sample(row: ArrayLike<number>, ctx: SamplingContext): number {
    if (this.greedy && this.stages.length === 0) return argmaxOf(row); // nothing to filter: no copy of the row
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
  if (chain.greedy) {
    const id = chain.sample(row, ctx);
    return { accepted: id === draftId, id };
  }
  const c = chain.filter(row, ctx);
  if (c.size === 1) {
    const id = c.ids[0];
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
