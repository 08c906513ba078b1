import type { DecodeOptions } from './decodeOptions';

/**
 * The one table of decode options. Everything else is derived from it: the engine's defaults and limits
 * (decodeOptions.ts), the snake_case fields of `serve-stdio` / `--json` and the CLI flags (src/cli), the
 * two presets and their settings (src/completion: presets.ts, settingsSchema.ts), and package.json is checked
 * against it by a test. Adding a knob is one row here (plus its field in DecodeOptions).
 */

export type OptionType = 'integer' | 'number' | 'boolean' | 'string[]';
export type PresetName = 'inline' | 'generate';

/** A setting a user may change, `ghostline.<key>`; its bounds may be narrower than the engine's. */
export interface SettingColumn {
  key: string;
  /** The setting's type when it differs from the option's (a whole number of ms for a fractional option). */
  type?: OptionType;
  min?: number;
  max?: number;
  description: string;
}

/** An option's value in a preset, and the setting that changes it (none: fixed). */
export interface PresetColumn {
  default: number | boolean | string[];
  setting?: SettingColumn;
}

export interface OptionRow {
  key: keyof DecodeOptions;
  type: OptionType;
  /** The engine's limits: a request outside them is an error naming the option. */
  min?: number;
  max?: number;
  /** The engine's default (a request that does not set the option). */
  default: number | boolean | string[];
  inline?: PresetColumn;
  generate?: PresetColumn;
}

const spec = (key: string, description: string, min?: number, max?: number): SettingColumn => ({ key, description, min, max });
const speculative = spec(
  'engine.speculativeTokens',
  'Prompt-lookup speculative decoding: up to this many tokens guessed from the context and checked in one model pass (0: off). Changes the speed only: suggestions keep the same distribution.',
  0,
  32,
);

/**
 * Inline completion: near-greedy (temperature 0.2, top-k 8, fixed seed: the same context gives the same
 * suggestion), no repetition penalty (code repeats itself legitimately), one line when there is text right of
 * the cursor and up to `maxLines` lines on an empty line or after a block opener, a time budget once the first
 * line is complete. Generate from Selection: a longer continuation for review, more varied (temperature 0.4,
 * top-k 40, top-p 0.95, min-p 0.05), a light repetition penalty against loops, 60 lines and 20 s at most
 * (both settings; the rules in src/completion/generate/ also stop it where its block ends).
 * Both draft up to 8 tokens by prompt lookup (the same distribution, about 1.5x faster decoding on real code)
 * and heal the prompt's last token (cursors split tokens). Inline stops where the text falls into a loop.
 */
export const DECODE_TABLE: readonly OptionRow[] = [
  {
    key: 'maxNewTokens',
    type: 'integer',
    min: 1,
    max: 4096,
    default: 128,
    inline: { default: 96, setting: spec('inline.maxNewTokens', 'Most tokens an inline suggestion may have.', 1, 512) },
    generate: { default: 256, setting: spec('generate.maxNewTokens', 'Generate from Selection: most tokens generated.', 1, 2048) },
  },
  {
    key: 'temperature',
    type: 'number',
    min: 0,
    max: 10,
    default: 0,
    inline: { default: 0.2, setting: spec('inline.temperature', 'Inline completion temperature (0: greedy).', 0, 2) },
    generate: { default: 0.4, setting: spec('generate.temperature', 'Generate from Selection: temperature (0: greedy).', 0, 2) },
  },
  {
    key: 'topK',
    type: 'integer',
    min: 0,
    max: 1_000_000,
    default: 0,
    inline: { default: 8, setting: spec('inline.topK', 'Inline completion top-k (0: off).', 0, 1000) },
    generate: { default: 40, setting: spec('generate.topK', 'Generate from Selection: top-k (0: off).', 0, 1000) },
  },
  {
    key: 'topP',
    type: 'number',
    min: 0,
    max: 1,
    default: 1,
    inline: { default: 0.95, setting: spec('inline.topP', 'Inline completion top-p (1: off).', 0, 1) },
    generate: { default: 0.95, setting: spec('generate.topP', 'Generate from Selection: top-p (1: off).', 0, 1) },
  },
  {
    key: 'minP',
    type: 'number',
    min: 0,
    max: 1,
    default: 0,
    inline: { default: 0, setting: spec('inline.minP', 'Inline completion min-p (0: off).', 0, 1) },
    generate: { default: 0.05, setting: spec('generate.minP', 'Generate from Selection: min-p (0: off).', 0, 1) },
  },
  {
    key: 'repetitionPenalty',
    type: 'number',
    min: 0.01,
    max: 10,
    default: 1,
    inline: { default: 1, setting: spec('inline.repetitionPenalty', 'Inline completion repetition penalty (1: off).', 1, 2) },
    generate: { default: 1.1, setting: spec('generate.repetitionPenalty', 'Generate from Selection: repetition penalty (1: off).', 1, 2) },
  },
  { key: 'repetitionWindow', type: 'integer', min: 0, max: 100_000, default: 256 },
  { key: 'copyBias', type: 'number', min: 0, max: 20, default: 0 },
  { key: 'seed', type: 'integer', min: 0, max: 2 ** 32 - 1, default: 0, inline: { default: 0 }, generate: { default: 0 } },
  {
    key: 'stop',
    type: 'string[]',
    default: [],
    inline: { default: [], setting: spec('inline.stop', 'Extra stop strings for inline suggestions.') },
    generate: { default: [], setting: spec('generate.stop', 'Generate from Selection: stop strings.') },
  },
  {
    key: 'maxLines',
    type: 'integer',
    min: 0,
    max: 10_000,
    default: 0,
    inline: {
      default: 8,
      setting: spec(
        'inline.maxLines',
        'Most lines of a block suggestion (on an empty line or after a block opener). With text right of the cursor, suggestions are always one line.',
        1,
        50,
      ),
    },
    generate: {
      default: 60,
      setting: spec(
        'generate.maxLines',
        'Generate from Selection: most lines of a result (0: no limit). The result also stops where the block it is in ends.',
        0,
        1000,
      ),
    },
  },
  {
    key: 'timeBudgetMs',
    type: 'number',
    min: 0,
    max: 3_600_000,
    default: 0,
    inline: {
      default: 800,
      setting: { ...spec('inline.timeBudgetMs', 'Once the first line is complete, stop generating after this many milliseconds.', 50, 10000), type: 'integer' },
    },
    generate: {
      default: 20000,
      setting: {
        ...spec(
          'generate.timeBudgetMs',
          'Generate from Selection: stop generating after this many milliseconds (counted once the first line is complete). The last, unfinished line is dropped.',
          1000,
          120000,
        ),
        type: 'integer',
      },
    },
  },
  { key: 'numBeams', type: 'integer', min: 1, max: 16, default: 1 },
  { key: 'numReturnSequences', type: 'integer', min: 1, max: 16, default: 1 },
  { key: 'stopOnSpecialTokens', type: 'boolean', default: true },
  { key: 'ignoreEos', type: 'boolean', default: false },
  {
    key: 'speculativeTokens',
    type: 'integer',
    min: 0,
    max: 32,
    default: 0,
    inline: { default: 8, setting: speculative },
    generate: { default: 8, setting: speculative },
  },
  { key: 'tokenHealing', type: 'boolean', default: false, inline: { default: true }, generate: { default: true } },
  // Inline: a loop's tokens are all cut by the repetition filter, and on a CPU they are the slowest pauses.
  { key: 'stopOnLoop', type: 'boolean', default: false, inline: { default: true } },
];

/** `maxNewTokens` -> `max_new_tokens` (serve-stdio fields, `--json` output). */
export const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** `maxNewTokens` -> `max-new-tokens` (CLI flags). */
export const kebabCase = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The options a preset sets, with their values: the preset is exactly the rows that have its column. */
export function presetDefaults(preset: PresetName): Partial<DecodeOptions> {
  const out: Record<string, unknown> = {};
  for (const row of DECODE_TABLE) {
    const col = row[preset];
    if (col) out[row.key] = Array.isArray(col.default) ? [...col.default] : col.default;
  }
  return out as Partial<DecodeOptions>;
}
