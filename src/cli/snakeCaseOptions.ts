import { resolveDecodeOptions, type DecodeOptions } from '../engine/shared/decodeOptions';
import { RequestError } from '../engine/shared/errors';

/** The snake_case names of the CLI / serve-stdio contract, mapped to DecodeOptions keys. */
export const SNAKE_TO_OPTION: Record<string, keyof DecodeOptions> = {
  max_new_tokens: 'maxNewTokens',
  temperature: 'temperature',
  top_k: 'topK',
  top_p: 'topP',
  min_p: 'minP',
  repetition_penalty: 'repetitionPenalty',
  repetition_window: 'repetitionWindow',
  seed: 'seed',
  stop: 'stop',
  max_lines: 'maxLines',
  time_budget_ms: 'timeBudgetMs',
  num_beams: 'numBeams',
  num_return_sequences: 'numReturnSequences',
  stop_on_special_tokens: 'stopOnSpecialTokens',
  ignore_eos: 'ignoreEos',
  speculative_tokens: 'speculativeTokens',
  token_healing: 'tokenHealing',
};

/** Picks the decode options out of a snake_case request, ignoring the keys listed in `other`. */
export function decodeOptionsFromSnake(req: Record<string, unknown>, other: readonly string[]): Partial<DecodeOptions> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(req)) {
    // Own keys only: a request field named `constructor` or `__proto__` is unknown, not Object.prototype's.
    const opt = Object.hasOwn(SNAKE_TO_OPTION, key) ? SNAKE_TO_OPTION[key] : undefined;
    if (opt) out[opt] = value;
    else if (!other.includes(key)) throw new RequestError(`unknown request field ${JSON.stringify(key)}`);
  }
  const partial = out as Partial<DecodeOptions>;
  // Validate here so that errors name the request's own fields (top_p, not topP).
  resolveDecodeOptions(partial, (k) => OPTION_TO_SNAKE[k] ?? k);
  return partial;
}

const OPTION_TO_SNAKE = Object.fromEntries(Object.entries(SNAKE_TO_OPTION).map(([s, o]) => [o, s])) as Record<string, string>;
