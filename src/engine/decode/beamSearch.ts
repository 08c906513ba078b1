import type { DecodeOptions } from '../shared/decodeOptions';
import { topIndices } from './samplers/candidates';
import { logSoftmaxRow } from './logSoftmax';
import type { FinishReason } from '../shared/types';
import { TextStopper } from '../shared/textStopper';
import { StreamingDetokenizer } from './streamingDetokenizer';
import { restrictTo } from '../model/tokenHealing';
import type { Sequence } from '../shared/types';

export interface BeamStepper {
  /** Feeds one token per beam; row j continues parent row parents[j]. Returns [beams, vocab] logits. */
  step(tokens: number[], parents: number[]): Promise<Float32Array>;
  room(): number;
}

export interface BeamSearchInput {
  firstLogits: Float32Array;
  vocab: number;
  opts: DecodeOptions;
  stopIds: ReadonlySet<number>;
  decode: (ids: number[]) => string;
  stepper: BeamStepper;
  signal?: AbortSignal;
  startedAt: number;
  now: () => number;
  /**
   * Token healing: the prompt text taken back, which every hypothesis must start with (`allowed`: the
   * tokens whose text starts with it; beams take no partial heals) and which is then removed from the texts.
   */
  heal?: { text: string; allowed: readonly number[] };
}

interface Beam {
  tokens: number[];
  logprob: number;
  tokenLogprobs: number[];
}

interface Hypothesis extends Beam {
  text: string;
  finishReason: FinishReason;
}

/** Characters of decoded text after each token, through the same streaming detokenizer as sampling. */
function textEnds(tokens: number[], decode: (ids: number[]) => string): number[] {
  const detok = new StreamingDetokenizer(decode);
  let n = 0;
  return tokens.map((t) => (n += detok.push(t).length));
}

/**
 * Beam search with length-normalised scores (logprob / tokens, Hugging Face's length_penalty 1).
 * Hypotheses end on EOS or a text stop rule; the search ends when enough have ended and no live beam
 * can beat the worst of them, at max_new_tokens, on the time budget, or on cancel.
 */
export async function beamSearch(input: BeamSearchInput): Promise<Sequence[]> {
  const { opts, vocab, stepper } = input;
  const width = opts.numBeams;
  const wanted = opts.numReturnSequences;
  const logp = new Float32Array(vocab);
  const finished: Hypothesis[] = [];
  let beams: Beam[] = [{ tokens: [], logprob: 0, tokenLogprobs: [] }];
  const healText = input.heal?.text ?? '';
  // Healing: only tokens that extend the healed text may start a hypothesis.
  let logits = input.heal ? restrictTo(input.firstLogits, input.heal.allowed) : input.firstLogits;
  let reason: FinishReason = 'length';
  const score = (h: { tokens: number[]; logprob: number }) => h.logprob / Math.max(1, h.tokens.length);

  const endText = (tokens: number[]): { text: string; stopped: boolean; timeUp: boolean } => {
    const stopper = new TextStopper(opts, input.startedAt);
    let text = stopper.push(input.decode(tokens).slice(healText.length), input.now());
    const stopped = stopper.finishReason === 'stop';
    if (!stopped) text += stopper.flush();
    return { text, stopped, timeUp: stopper.finishReason === 'time' };
  };

  for (let step = 0; ; step++) {
    // Expand every live beam by its best `width` tokens, then keep the best `width` live continuations.
    const cands: { parent: number; token: number; logprob: number; tokenLogprob: number }[] = [];
    for (let b = 0; b < beams.length; b++) {
      logSoftmaxRow(logits, b, vocab, logp);
      for (const t of topIndices(logp, vocab, width + 1)) cands.push({ parent: b, token: t, logprob: beams[b].logprob + logp[t], tokenLogprob: logp[t] });
    }
    cands.sort((a, b) => b.logprob / (beams[b.parent].tokens.length + 1) - a.logprob / (beams[a.parent].tokens.length + 1));
    const next: Beam[] = [];
    const parents: number[] = [];
    let timeUp = false;
    for (const c of cands) {
      if (next.length >= width) break;
      const parent = beams[c.parent];
      if (input.stopIds.has(c.token)) {
        const body = parent.tokens;
        finished.push({ tokens: body, logprob: c.logprob, tokenLogprobs: parent.tokenLogprobs, text: endText(body).text, finishReason: 'eos' });
        continue;
      }
      const tokens = parent.tokens.concat(c.token);
      const tokenLogprobs = parent.tokenLogprobs.concat(c.tokenLogprob);
      const end = endText(tokens);
      if (end.stopped) {
        finished.push({ tokens, logprob: c.logprob, tokenLogprobs, text: end.text, finishReason: 'stop' });
        continue;
      }
      timeUp ||= end.timeUp;
      next.push({ tokens, logprob: c.logprob, tokenLogprobs });
      parents.push(c.parent);
    }
    beams = next;
    const best = beams.length ? Math.max(...beams.map(score)) : -Infinity;
    const worstKept = finished.length >= wanted ? finished.map(score).sort((a, b) => b - a)[wanted - 1] : -Infinity;
    if (beams.length === 0 || (finished.length >= wanted && best <= worstKept)) {
      reason = 'eos';
      break;
    }
    if (input.signal?.aborted) {
      reason = 'cancelled';
      break;
    }
    if (timeUp) {
      reason = 'time';
      break;
    }
    if (step + 1 >= opts.maxNewTokens || stepper.room() <= 0) {
      reason = 'length';
      break;
    }
    logits = await stepper.step(
      beams.map((b) => b.tokens[b.tokens.length - 1]),
      parents,
    );
  }

  const live: Hypothesis[] = beams.map((b) => ({ ...b, text: endText(b.tokens).text, finishReason: reason }));
  const all = [...finished, ...live].sort((a, b) => score(b) - score(a));
  // Distinct texts only: n-best alternatives that read the same are useless to a user.
  const seen = new Set<string>();
  const out: Sequence[] = [];
  for (const h of all) {
    if (seen.has(h.text)) continue;
    seen.add(h.text);
    out.push({
      text: h.text,
      finishReason: h.finishReason,
      logprob: h.logprob,
      tokens: h.tokens,
      tokenLogprobs: h.tokenLogprobs,
      tokenTextEnds: textEnds(h.tokens, input.decode).map((e) => Math.max(0, e - healText.length)),
    });
    if (out.length >= wanted) break;
  }
  return out;
}
