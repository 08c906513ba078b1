import type { DecodeOptions } from './decodeOptions';
import type { SamplerChain } from './samplers/chain';
import type { Prng } from './samplers/prng';
import { TextStopper, type FinishReason } from './stopping';
import { StreamingDetokenizer } from './streamingDetokenizer';
import type { Sequence } from './types';

export interface DecodeStepper {
  /** Feeds one token and returns the logits row that follows it. */
  step(token: number): Promise<Float32Array>;
  /** Tokens the context still has room for. */
  room(): number;
}

export interface SampleLoopInput {
  firstLogits: Float32Array;
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
}

/** Sampling / greedy decoding of one sequence, with every stop rule checked after each token. */
export async function sampleLoop(input: SampleLoopInput): Promise<Sequence> {
  const { opts, chain, stopIds, stepper, signal } = input;
  const detok = new StreamingDetokenizer(input.decode);
  const stopper = new TextStopper(opts, input.startedAt);
  const history = input.history.slice();
  const tokens: number[] = [];
  let text = '';
  const emit = (delta: string) => {
    if (!delta) return;
    text += delta;
    input.onText?.(delta);
  };
  let logits = input.firstLogits;
  let finish: FinishReason | null = null;
  for (;;) {
    if (signal?.aborted) {
      finish = 'cancelled';
      break;
    }
    const id = chain.sample(logits, { history, rng: input.rng });
    if (stopIds.has(id)) {
      finish = 'eos';
      break;
    }
    tokens.push(id);
    history.push(id);
    emit(stopper.push(detok.push(id), input.now()));
    if (stopper.finishReason) {
      finish = stopper.finishReason;
      break;
    }
    if (tokens.length >= opts.maxNewTokens || stepper.room() <= 0) {
      finish = 'length';
      break;
    }
    logits = await stepper.step(id);
  }
  if (finish !== 'stop') emit(stopper.push(detok.flush(), input.now()));
  if (!stopper.finishReason || stopper.finishReason === 'time') emit(stopper.flush());
  if (stopper.finishReason === 'stop') finish = 'stop';
  return { text, finishReason: finish, logprob: NaN, tokens };
}
