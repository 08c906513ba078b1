import { RequestError } from './errors';

/**
 * Every knob of one generation. Defaults live in DEFAULT_DECODE_OPTIONS and nowhere else;
 * the inline-completion and generate-from-selection presets override a few of them.
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
  /** Seed of the sampling PRNG: the same seed and prompt give the same output. */
  seed: number;
  /** Generation stops before any of these strings; the stop string is not part of the text. */
  stop: string[];
  /** Stop once the text holds this many complete lines (0: no limit). `maxLines: 1` is the newline stop. */
  maxLines: number;
  /** Once the first line is complete, stop when this many ms have passed (0: no budget). */
  timeBudgetMs: number;
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
}

export const DEFAULT_DECODE_OPTIONS: Readonly<DecodeOptions> = Object.freeze({
  maxNewTokens: 128,
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repetitionPenalty: 1,
  repetitionWindow: 256,
  seed: 0,
  stop: [],
  maxLines: 0,
  timeBudgetMs: 0,
  numBeams: 1,
  numReturnSequences: 1,
  stopOnSpecialTokens: true,
  ignoreEos: false,
  speculativeTokens: 0,
  tokenHealing: false,
});

const LIMITS: Record<keyof Omit<DecodeOptions, 'stop' | 'stopOnSpecialTokens' | 'ignoreEos' | 'tokenHealing'>, [number, number, boolean]> = {
  // [min, max, integer]
  maxNewTokens: [1, 4096, true],
  temperature: [0, 10, false],
  topK: [0, 1_000_000, true],
  topP: [0, 1, false],
  minP: [0, 1, false],
  repetitionPenalty: [0.01, 10, false],
  repetitionWindow: [0, 100_000, true],
  seed: [0, 2 ** 32 - 1, true],
  maxLines: [0, 10_000, true],
  timeBudgetMs: [0, 3_600_000, false],
  numBeams: [1, 16, true],
  numReturnSequences: [1, 16, true],
  speculativeTokens: [0, 32, true],
};

/**
 * Merges a partial set of options over the defaults and rejects values that make no sense,
 * naming the option. The engine never guesses what an absurd value meant.
 */
export function resolveDecodeOptions(
  partial: Partial<DecodeOptions> = {},
  nameOf: (key: keyof DecodeOptions) => string = (k) => k,
): DecodeOptions {
  const out: DecodeOptions = { ...DEFAULT_DECODE_OPTIONS, stop: [...DEFAULT_DECODE_OPTIONS.stop] };
  for (const [key, value] of Object.entries(partial) as [keyof DecodeOptions, unknown][]) {
    if (value === undefined) continue;
    if (key === 'stop') {
      if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) {
        throw new RequestError(`${nameOf('stop')} must be an array of strings`);
      }
      out.stop = (value as string[]).filter((s) => s.length > 0);
      continue;
    }
    if (key === 'stopOnSpecialTokens' || key === 'ignoreEos' || key === 'tokenHealing') {
      if (typeof value !== 'boolean') throw new RequestError(`${nameOf(key)} must be a boolean`);
      out[key] = value;
      continue;
    }
    // Own keys only: `constructor` or `__proto__` must not reach Object.prototype.
    const limits = Object.hasOwn(LIMITS, key) ? LIMITS[key as keyof typeof LIMITS] : undefined;
    if (!limits) throw new RequestError(`unknown decode option ${JSON.stringify(String(key))}`);
    const [min, max, integer] = limits;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new RequestError(`${nameOf(key)} must be a finite number, got ${JSON.stringify(value)}`);
    }
    if (value < min || value > max) throw new RequestError(`${nameOf(key)} must be between ${min} and ${max}, got ${value}`);
    if (integer && !Number.isInteger(value)) throw new RequestError(`${nameOf(key)} must be an integer, got ${value}`);
    (out as unknown as Record<string, number>)[key] = value;
  }
  if (out.numBeams > 1 && out.numReturnSequences > out.numBeams) {
    throw new RequestError(
      `${nameOf('numReturnSequences')} (${out.numReturnSequences}) must not exceed ${nameOf('numBeams')} (${out.numBeams})`,
    );
  }
  return out;
}
