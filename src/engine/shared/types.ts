import type { DeviceReport } from './device';

/** Why a generation ended. `loop`: the text fell into a loop (stopOnLoop, engine/shared/loopCheck.ts). */
export type FinishReason = 'eos' | 'length' | 'stop' | 'time' | 'loop' | 'cancelled' | 'error';

export interface GenerationStats {
  promptTokens: number;
  /** Prompt tokens whose KV came from the previous request. */
  reusedTokens: number;
  /** Prompt tokens run through the model for this request. */
  prefillTokens: number;
  generatedTokens: number;
  /** Prompt tokens dropped from the left to fit the model's context. */
  truncatedTokens: number;
  prefillMs: number;
  decodeMs: number;
  totalMs: number;
  /** Prompt-lookup draft tokens proposed and accepted (speculativeTokens > 0). */
  draftTokens: number;
  acceptedDraftTokens: number;
}

export interface Sequence {
  text: string;
  finishReason: FinishReason;
  /** Sum of token log-probabilities (beam search) or NaN when sampling. */
  logprob: number;
  tokens: number[];
  /**
   * Log-probability of each of `tokens` under the model's own distribution (before repetition penalty,
   * temperature and truncation): the evidence the completion gate scores a suggestion by.
   */
  tokenLogprobs: number[];
  /** Characters of decoded output after each token (before stop rules cut the end): maps tokens to lines. */
  tokenTextEnds: number[];
}

export interface GenerateResult extends Sequence {
  /** All returned sequences, best first (one unless numReturnSequences > 1). */
  sequences: Sequence[];
  stats: GenerationStats;
  /** What the engine changed about the request (a capped max_new_tokens, a prompt cut to the context). */
  notices?: string[];
}

export interface ModelInfo {
  name: string;
  dir: string;
  onnxFile: string;
  layers: number;
  vocab: number;
  contextLength: number;
  /** Characters per token of the tokenizer on typical code, measured at load (sizes prompts in characters). */
  charsPerToken: number;
  eosIds: number[];
  /** Added tokens (special or not) by text, so the completion layer can pick a FIM template. */
  specialTokens: Record<string, number>;
  kvBytesPerToken: number;
  threads: number;
  /**
   * The engine's moved-runs threshold as loaded (`EngineOptions.moveCachedRunsOverMs`, -1: never), and whether
   * this graph can move runs at all (lean graphs, i.e. converted checkpoints).
   */
  moveCachedRunsOverMs: number;
  canMoveCachedRuns: boolean;
  modelType: string;
  /** Where the model runs and why (shared/device.ts); changes when a failing GPU hands over to the CPU. */
  device: DeviceReport;
}

/** What a caller of generate() may hook into; one type for the worker's engine, its client and every backend. */
export interface GenerateHooks {
  signal?: AbortSignal;
  /** Streamed text of the first sequence, never half a character nor part of a stop string. */
  onText?: (delta: string) => void;
  /** Called when the request's turn comes (the worker runs requests one at a time). */
  onStart?: () => void;
  /**
   * Called once, when the first sequence has written a line with code on it and the newline after it (a
   * block's first line), or when `partialLineMs` passed before that (the line so far, `partial`): its text and
   * its tokens' log-probabilities, so a caller can show that line while the rest is written. Not called for
   * beam search, nor when the answer ends first.
   */
  onFirstLine?: (line: FirstLine) => void;
  /** Tokens per prefill pass (default: the engine's prefillChunk). Smaller lets a cancel land sooner, at some speed. */
  prefillChunk?: number;
}

/** The start of an answer up to the end of its first line with code on it (the newline not included). */
export interface FirstLine {
  text: string;
  /** Per token up to the one that holds that newline, as in a Sequence. */
  tokenLogprobs: number[];
  tokenTextEnds: number[];
  /** The line is not complete: it was still being written when `partialLineMs` passed (firstLineToShow.ts). */
  partial?: boolean;
}

/** Where `text`'s first line with code on it ends (the index of the newline after it), or -1 before it is complete. */
export function firstLineEnd(text: string): number {
  const content = text.search(/\S/);
  return content < 0 ? -1 : text.indexOf('\n', content);
}
