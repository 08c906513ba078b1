import type { DecodeOptions } from '../shared/decodeOptions';
import { verifyDraft, type SamplerChain } from './samplers/chain';
import type { Prng } from './samplers/prng';
import { TextStopper } from '../shared/textStopper';
import { firstLineToShow } from '../shared/firstLineToShow';
import type { FinishReason, FirstLine } from '../shared/types';
import { StreamingDetokenizer } from './streamingDetokenizer';
import type { Sequence } from '../shared/types';
import { lookupDraft } from './promptLookup';
import { tokenLogprob } from './logSoftmax';
import { restrictTo } from '../model/tokenHealing';

/** Logit rows [rows, vocab] and, when the model computed them, each row's log-sum-exp. */
export interface LogitRows {
  logits: Float32Array;
  lse?: Float32Array;
}

export interface DecodeStepper {
  /** Feeds one token and returns the logits row that follows it. */
  step(token: number): Promise<LogitRows>;
  /** Feeds several tokens and returns the logits row after each of them ([tokens.length, vocab]). */
  stepMany(tokens: number[]): Promise<LogitRows>;
  /** Forgets the last n fed tokens (rejected draft tokens). */
  rollback(n: number): void;
  /** Tokens the context still has room for. */
  room(): number;
}

export interface SampleLoopInput {
  first: LogitRows;
  /** Token healing: the text the output starts with, which belongs to the prompt, not the output. */
  healText?: string;
  /** Token healing: the ids that can begin a text starting with the part of `healText` not yet covered. */
  healAllowed?: (remaining: string) => readonly number[];
  history: number[];
  opts: DecodeOptions;
  chain: SamplerChain;
  rng: Prng;
  stopIds: ReadonlySet<number>;
  decode: (ids: number[]) => string;
  stepper: DecodeStepper;
  signal?: AbortSignal;
  startedAt: number;
  now: () => number;
  onText?: (delta: string) => void;
  onFirstLine?: (line: FirstLine) => void;
  /** Counts drafted and accepted speculative tokens. */
  draftStats?: { drafted: number; accepted: number };
}

/** Sampling / greedy decoding of one sequence, with every stop rule checked after each token. */
export async function sampleLoop(input: SampleLoopInput): Promise<Sequence> {
  const { opts, chain, stopIds, stepper, signal } = input;
  const detok = new StreamingDetokenizer(input.decode);
  const stopper = new TextStopper(opts, input.startedAt);
  const history = input.history.slice();
  const tokens: number[] = [];
  const tokenLogprobs: number[] = [];
  const tokenTextEnds: number[] = [];
  let decoded = 0;
  let text = '';
  let onFirstLine = input.onFirstLine;
  const emit = (delta: string) => {
    if (!delta) return;
    text += delta;
    input.onText?.(delta);
    // Emitted text is a prefix of the decoded text, which tokenTextEnds measure.
    const line = onFirstLine ? firstLineToShow(text, tokenLogprobs, tokenTextEnds, input.now() - input.startedAt, opts.partialLineMs) : null;
    if (onFirstLine && line) {
      onFirstLine(line);
      onFirstLine = undefined;
    }
  };
  // What is left of the healed prompt text in the decoded output, removed before stop rules see it.
  let heal = input.healText ?? '';
  const unheal = (text: string): string => {
    if (!heal) return text;
    const n = Math.min(heal.length, text.length);
    heal = heal.slice(n);
    return text.slice(n);
  };
  let logits = input.first.logits;
  /** logits' log-sum-exp, when the model computed it. */
  let lse = input.first.lse?.[0];
  let finish: FinishReason | null = null;
  const vocab = logits.length;
  const speculate = opts.speculativeTokens > 0;
  /** A draft token's replacement, already drawn: emitted next instead of sampling again (with its row). */
  let pending: { id: number; row: Float32Array; lse?: number } | null = null;
  /** Takes one token drawn from `row` (log-sum-exp `rowLse`, when known); returns a finish reason when generation must end with it. */
  const accept = (id: number, row: Float32Array, rowLse: number | undefined): FinishReason | null => {
    if (stopIds.has(id)) return 'eos';
    tokens.push(id);
    history.push(id);
    tokenLogprobs.push(tokenLogprob(row, id, rowLse));
    const piece = unheal(detok.push(id));
    decoded += piece.length;
    tokenTextEnds.push(decoded);
    emit(stopper.push(piece, input.now()));
    if (stopper.finishReason) return stopper.finishReason;
    if (tokens.length >= opts.maxNewTokens || stepper.room() <= 0) return 'length';
    return null;
  };
  for (;;) {
    if (signal?.aborted) {
      finish = 'cancelled';
      break;
    }
    // While healed prompt text is not yet covered, only tokens that continue it may be drawn (and their
    // log-probabilities are among those: the restricted row's own log-sum-exp).
    const restricted = !pending && heal && input.healAllowed;
    const row = pending?.row ?? (restricted ? restrictTo(logits, input.healAllowed!(heal)) : logits);
    const rowLse = pending ? pending.lse : restricted ? undefined : lse;
    const id = pending?.id ?? chain.sample(row, { history, rng: input.rng });
    pending = null;
    finish = accept(id, row, rowLse);
    if (finish) break;
    const draft = speculate && !heal ? lookupDraft(history, Math.min(opts.speculativeTokens, stepper.room() - 1, opts.maxNewTokens - tokens.length)) : [];
    if (draft.length === 0) {
      const next = await stepper.step(id);
      logits = next.logits;
      lse = next.lse?.[0];
      continue;
    }
    // Verify the draft in one pass: row j holds the logits after [id, draft[0..j-1]]. The first rejected
    // token's replacement is drawn from that row's residual and emitted next (see verifyDraft).
    const { logits: rows, lse: rowsLse } = await stepper.stepMany([id, ...draft]);
    if (input.draftStats) input.draftStats.drafted += draft.length;
    let agreed = 0;
    while (agreed < draft.length && !finish) {
      const row = rows.subarray(agreed * vocab, (agreed + 1) * vocab);
      const verdict = verifyDraft(chain, row, draft[agreed], { history, rng: input.rng });
      if (!verdict.accepted) {
        pending = { id: verdict.id, row, lse: rowsLse?.[agreed] };
        break;
      }
      finish = accept(draft[agreed], row, rowsLse?.[agreed]);
      agreed++;
    }
    if (input.draftStats) input.draftStats.accepted += agreed;
    stepper.rollback(draft.length - agreed);
    if (finish) break;
    if (pending === null) {
      logits = rows.slice(agreed * vocab, (agreed + 1) * vocab);
      lse = rowsLse?.[agreed];
    }
  }
  if (finish !== 'stop') emit(stopper.push(unheal(detok.flush()), input.now()));
  if (!stopper.finishReason || stopper.finishReason === 'time') emit(stopper.flush());
  if (stopper.finishReason === 'stop') finish = 'stop';
  return { text, finishReason: finish, logprob: NaN, tokens, tokenLogprobs, tokenTextEnds };
}
