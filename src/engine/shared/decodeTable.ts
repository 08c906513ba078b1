import type { DecodeOptions } from './decodeOptions';

/**
 * The one table of decode options the engine knows: each option's type, limits and default (a request that does
 * not set it). Derived from it: the engine's defaults and checks (decodeOptions.ts), the snake_case fields of
 * `serve-stdio` / `--json` and the CLI flags (src/cli). The product's presets and their settings are a table of
 * their own in src/completion/presetTable.ts, keyed by these rows. Adding a knob is one row here (plus its field
 * in DecodeOptions).
 */

export type OptionType = 'integer' | 'number' | 'boolean' | 'string[]';

export interface OptionRow {
  key: keyof DecodeOptions;
  type: OptionType;
  /** The engine's limits: a request outside them is an error naming the option. For a list: most strings. */
  min?: number;
  max?: number;
  /** For a list: the longest string. */
  maxLength?: number;
  /** The engine's default (a request that does not set the option). */
  default: number | boolean | string[];
}

export const DECODE_TABLE: readonly OptionRow[] = [
  { key: 'maxNewTokens', type: 'integer', min: 1, max: 4096, default: 128 },
  { key: 'temperature', type: 'number', min: 0, max: 10, default: 0 },
  { key: 'topK', type: 'integer', min: 0, max: 1_000_000, default: 0 },
  { key: 'topP', type: 'number', min: 0, max: 1, default: 1 },
  { key: 'minP', type: 'number', min: 0, max: 1, default: 0 },
  { key: 'repetitionPenalty', type: 'number', min: 0.01, max: 10, default: 1 },
  { key: 'repetitionWindow', type: 'integer', min: 0, max: 100_000, default: 256 },
  { key: 'copyBias', type: 'number', min: 0, max: 20, default: 0 },
  { key: 'seed', type: 'integer', min: 0, max: 2 ** 32 - 1, default: 0 },
  // Stop strings are matched against the text at every token: a bounded list of short strings.
  { key: 'stop', type: 'string[]', max: 64, maxLength: 256, default: [] },
  { key: 'maxLines', type: 'integer', min: 0, max: 10_000, default: 0 },
  { key: 'timeBudgetMs', type: 'number', min: 0, max: 3_600_000, default: 0 },
  { key: 'partialLineMs', type: 'number', min: 0, max: 3_600_000, default: 0 },
  { key: 'numBeams', type: 'integer', min: 1, max: 16, default: 1 },
  { key: 'numReturnSequences', type: 'integer', min: 1, max: 16, default: 1 },
  { key: 'stopOnSpecialTokens', type: 'boolean', default: true },
  { key: 'ignoreEos', type: 'boolean', default: false },
  { key: 'speculativeTokens', type: 'integer', min: 0, max: 32, default: 0 },
  { key: 'tokenHealing', type: 'boolean', default: false },
  { key: 'stopOnLoop', type: 'boolean', default: false },
];

/** `maxNewTokens` -> `max_new_tokens` (serve-stdio fields, `--json` output). */
export const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** `maxNewTokens` -> `max-new-tokens` (CLI flags). */
export const kebabCase = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
