import { DECODE_TABLE, snakeCase } from '../engine/shared/decodeTable';
import { resolveDecodeOptions, type DecodeOptions } from '../engine/shared/decodeOptions';
import { RequestError } from '../engine/shared/errors';

/** The snake_case names of the CLI / serve-stdio contract (`max_new_tokens`), mapped to DecodeOptions keys. */
export const SNAKE_TO_OPTION: ReadonlyMap<string, keyof DecodeOptions> = new Map(DECODE_TABLE.map((r) => [snakeCase(r.key), r.key]));

/** Picks the decode options out of a snake_case request, ignoring the keys listed in `other`. */
export function decodeOptionsFromSnake(req: Record<string, unknown>, other: readonly string[]): Partial<DecodeOptions> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(req)) {
    // A Map: a request field named `constructor` or `__proto__` is unknown, not Object.prototype's.
    const opt = SNAKE_TO_OPTION.get(key);
    if (opt) out[opt] = value;
    else if (!other.includes(key)) throw new RequestError(`unknown request field ${JSON.stringify(key)}`);
  }
  const partial = out as Partial<DecodeOptions>;
  // Validate here so that errors name the request's own fields (top_p, not topP).
  resolveDecodeOptions(partial, (k) => OPTION_TO_SNAKE[k] ?? k);
  return partial;
}

const OPTION_TO_SNAKE: Record<string, string> = Object.fromEntries([...SNAKE_TO_OPTION].map(([s, o]) => [o, s]));
