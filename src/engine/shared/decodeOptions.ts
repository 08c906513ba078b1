import { DECODE_TABLE } from './decodeTable';
import { RequestError } from './errors';

/**
 * Every knob of one generation. Defaults, limits and wire names: one row each in decodeTable.ts (the product's
 * presets are src/completion/presetTable.ts).
 */
export interface DecodeOptions {
  /** Hard cap on generated tokens. */
  maxNewTokens: number;
  /** 0 means greedy (argmax). */
  temperature: number;
  /** 0 disables top-k. */
  topK: number;
  /** 1 disables top-p (nucleus). */
  topP: number;
  /** 0 disables min-p. */
  minP: number;
  /** 1 disables the penalty (CTRL-style: positive logits divided, negative multiplied). */
  repetitionPenalty: number;
  /** How many of the most recent tokens (prompt included) the penalty looks at. */
  repetitionWindow: number;
  /**
   * Added to the logit of the token that continued the last 2-4 tokens where they occurred before (in the prompt
   * or the output): a nudge to copy what is in front of the model (0: off). It changes the distribution.
   */
  copyBias: number;
  /** Seed of the sampling PRNG: the same seed and prompt give the same output. */
  seed: number;
  /** Generation stops before any of these strings; the stop string is not part of the text. */
  stop: string[];
  /** Stop once the text holds this many complete lines (0: no limit). `maxLines: 1` is the newline stop. */
  maxLines: number;
  /** Once the first line is complete, stop when this many ms have passed (0: no budget). */
  timeBudgetMs: number;
  /**
   * When this many ms have passed since the request started and the first line is still being written, the
   * `onFirstLine` hook gets it as far as its last whole word, marked partial (0: only a complete line). It
   * stops nothing: generation goes on.
   */
  partialLineMs: number;
  /** Beam search width; 1 means sampling / greedy. */
  numBeams: number;
  /** Sequences returned (<= numBeams for beam search; independent samples otherwise). */
  numReturnSequences: number;
  /** Special tokens (FIM markers, file separators) end generation as EOS does. */
  stopOnSpecialTokens: boolean;
  /** Never stop on EOS or special tokens (benchmarks with fixed token counts, as llama.cpp's ignore_eos). */
  ignoreEos: boolean;
  /**
   * Draft up to this many tokens by prompt lookup and verify them in one forward pass (0: off). Greedy:
   * exactly the greedy output. Sampling: speculative sampling, so every token keeps the chain's exact
   * distribution (the random draws differ, so a seed gives another, equally likely, text).
   */
  speculativeTokens: number;
  /**
   * Token healing: take back the prompt's last token and make the first generated token start with its
   * text (a prompt cut at the cursor often ends mid-token). The output never repeats that text.
   */
  tokenHealing: boolean;
  /**
   * Stop as soon as the text falls into a loop (a statement repeated on the next line, a line looping on for
   * 48 characters; loopCheck.ts), where the completion's repetition filter would cut it anyway.
   */
  stopOnLoop: boolean;
}

export const DEFAULT_DECODE_OPTIONS: Readonly<DecodeOptions> = Object.freeze(
  Object.fromEntries(DECODE_TABLE.map((r) => [r.key, Array.isArray(r.default) ? [...r.default] : r.default])) as unknown as DecodeOptions,
);

/** [min, max, integer] of each numeric option. */
const LIMITS: ReadonlyMap<string, readonly [number, number, boolean]> = new Map(
  DECODE_TABLE.filter((r) => r.type === 'integer' || r.type === 'number').map((r) => [
    r.key,
    [r.min ?? -Infinity, r.max ?? Infinity, r.type === 'integer'] as const,
  ]),
);

/**
 * Merges a partial set of options over the defaults and rejects values that make no sense,
 * naming the option. The engine never guesses what an absurd value meant.
 */
export function resolveDecodeOptions(partial: Partial<DecodeOptions> = {}, nameOf: (key: keyof DecodeOptions) => string = (k) => k): DecodeOptions {
  const out: DecodeOptions = { ...DEFAULT_DECODE_OPTIONS, stop: [...DEFAULT_DECODE_OPTIONS.stop] };
  for (const [key, value] of Object.entries(partial) as [keyof DecodeOptions, unknown][]) {
    if (value === undefined) continue;
    const row = DECODE_TABLE.find((r) => r.key === key);
    if (!row) throw new RequestError(`unknown decode option ${JSON.stringify(String(key))}`);
    if (row.type === 'string[]') {
      if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) {
        throw new RequestError(`${nameOf(key)} must be an array of strings`);
      }
      if (row.max !== undefined && value.length > row.max) {
        throw new RequestError(`${nameOf(key)} takes at most ${row.max} strings, got ${value.length}`);
      }
      const long = (value as string[]).find((s) => s.length > (row.maxLength ?? Infinity));
      if (long !== undefined) throw new RequestError(`${nameOf(key)}: a string may be at most ${row.maxLength} characters, got one of ${long.length}`);
      (out as unknown as Record<string, string[]>)[key] = (value as string[]).filter((s) => s.length > 0);
      continue;
    }
    if (row.type === 'boolean') {
      if (typeof value !== 'boolean') throw new RequestError(`${nameOf(key)} must be a boolean`);
      (out as unknown as Record<string, boolean>)[key] = value;
      continue;
    }
    const [min, max, integer] = LIMITS.get(key)!;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new RequestError(`${nameOf(key)} must be a finite number, got ${JSON.stringify(value)}`);
    }
    if (value < min || value > max) throw new RequestError(`${nameOf(key)} must be between ${min} and ${max}, got ${value}`);
    if (integer && !Number.isInteger(value)) throw new RequestError(`${nameOf(key)} must be an integer, got ${value}`);
    (out as unknown as Record<string, number>)[key] = value;
  }
  if (out.numBeams > 1 && out.numReturnSequences > out.numBeams) {
    throw new RequestError(`${nameOf('numReturnSequences')} (${out.numReturnSequences}) must not exceed ${nameOf('numBeams')} (${out.numBeams})`);
  }
  return out;
}
