import type { Generator } from '../../src/completion/generator';
import { emptyStats } from '../../src/engine/shared/cancelledResult';
import type { DecodeOptions } from '../../src/engine/shared/decodeOptions';
import type { Prompt } from '../../src/engine/shared/prompt';
import type { GenerateResult } from '../../src/engine/shared/types';

/**
 * A perfect model: it answers every request with what the author really wrote at the cursor (`truth`), as
 * a model would under the request's limits. A single-line request (`maxLines: 1`) gets the truth's first
 * line; a block request gets up to `maxLines` of its lines. Whatever the pipeline then cuts, drops or
 * changes is the pipeline's loss, not the model's.
 */
export class OracleGenerator implements Generator {
  /** The text the last request was answered with (what a kept suggestion equals). */
  answered = '';
  /** The options of the last request (line or block mode). */
  lastOptions: Partial<DecodeOptions> = {};

  constructor(private readonly truth: string) {}

  async generate(_prompt: Prompt, options: Partial<DecodeOptions>): Promise<GenerateResult> {
    this.lastOptions = options;
    const text = oracleAnswer(this.truth, options.maxLines ?? 0);
    this.answered = text;
    const sequence = { text, finishReason: 'eos' as const, logprob: 0, tokens: [], tokenLogprobs: [], tokenTextEnds: [] };
    return {
      ...sequence,
      sequences: [sequence],
      // No model ran: every count is zero, as in a cancelled request's answer.
      stats: emptyStats(),
    };
  }
}

/** The truth as a model limited to `maxLines` lines (0: no limit) would return it. */
export function oracleAnswer(truth: string, maxLines: number): string {
  if (maxLines <= 0) return truth;
  return truth.split('\n').slice(0, maxLines).join('\n');
}
