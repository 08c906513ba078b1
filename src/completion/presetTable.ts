import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { OptionType } from '../engine/shared/decodeTable';

/**
 * The product's two decode presets, inline completion and Generate from Selection, and the settings that change
 * them: one row per engine option they set (src/engine/shared/decodeTable.ts has the option's type and limits).
 * Derived from it: presets.ts and the settings schema (settingsSchema.ts); package.json is checked against it by a
 * test. The engine knows none of this.
 */

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

export interface PresetRow {
  key: keyof DecodeOptions;
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
 * (both settings; the rules in src/completion/selection/ also stop it where its block ends).
 * Both draft up to 8 tokens by prompt lookup (the same distribution, about 1.5x faster decoding on real code)
 * and heal the prompt's last token (cursors split tokens). Inline stops where the text falls into a loop.
 */
export const PRESET_TABLE: readonly PresetRow[] = [
  {
    key: 'maxNewTokens',
    inline: { default: 96, setting: spec('inline.maxNewTokens', 'Most tokens an inline suggestion may have.', 1, 512) },
    generate: { default: 256, setting: spec('generate.maxNewTokens', 'Generate from Selection: most tokens generated.', 1, 2048) },
  },
  {
    key: 'temperature',
    inline: { default: 0.2, setting: spec('inline.temperature', 'Inline completion temperature (0: greedy).', 0, 2) },
    generate: { default: 0.4, setting: spec('generate.temperature', 'Generate from Selection: temperature (0: greedy).', 0, 2) },
  },
  {
    key: 'topK',
    inline: { default: 8, setting: spec('inline.topK', 'Inline completion top-k (0: off).', 0, 1000) },
    generate: { default: 40, setting: spec('generate.topK', 'Generate from Selection: top-k (0: off).', 0, 1000) },
  },
  {
    key: 'topP',
    inline: { default: 0.95, setting: spec('inline.topP', 'Inline completion top-p (1: off).', 0, 1) },
    generate: { default: 0.95, setting: spec('generate.topP', 'Generate from Selection: top-p (1: off).', 0, 1) },
  },
  {
    key: 'minP',
    inline: { default: 0, setting: spec('inline.minP', 'Inline completion min-p (0: off).', 0, 1) },
    generate: { default: 0.05, setting: spec('generate.minP', 'Generate from Selection: min-p (0: off).', 0, 1) },
  },
  {
    key: 'repetitionPenalty',
    inline: { default: 1, setting: spec('inline.repetitionPenalty', 'Inline completion repetition penalty (1: off).', 1, 2) },
    generate: { default: 1.1, setting: spec('generate.repetitionPenalty', 'Generate from Selection: repetition penalty (1: off).', 1, 2) },
  },
  {
    key: 'seed',
    inline: { default: 0 },
    generate: { default: 0 },
  },
  {
    key: 'stop',
    // At most 32 of the engine's 64: the FIM template's stop tokens are added to them.
    inline: { default: [], setting: spec('inline.stop', 'Extra stop strings for inline suggestions.', undefined, 32) },
    generate: { default: [], setting: spec('generate.stop', 'Generate from Selection: stop strings.', undefined, 32) },
  },
  {
    key: 'maxLines',
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
  // Inline only: Generate from Selection streams its text into a diff as it is written.
  {
    key: 'partialLineMs',
    inline: {
      default: 1000,
      setting: {
        ...spec(
          'inline.partialLineMs',
          "When a suggestion's first line is still being written this many milliseconds after the request started, show it as far as its last whole word; the rest follows when written (0: wait for the whole line).",
          0,
          10000,
        ),
        type: 'integer',
      },
    },
  },
  {
    key: 'speculativeTokens',
    inline: { default: 8, setting: speculative },
    generate: { default: 8, setting: speculative },
  },
  {
    key: 'tokenHealing',
    inline: { default: true },
    generate: { default: true },
  },
  // Inline: a loop's tokens are all cut by the repetition filter, and on a CPU they are the slowest pauses.
  {
    key: 'stopOnLoop',
    inline: { default: true },
  },
];

/** The options a preset sets, with their values: the preset is exactly the rows that have its column. */
export function presetDefaults(preset: PresetName): Partial<DecodeOptions> {
  const out: Record<string, unknown> = {};
  for (const row of PRESET_TABLE) {
    const col = row[preset];
    if (col) out[row.key] = Array.isArray(col.default) ? [...col.default] : col.default;
  }
  return out as Partial<DecodeOptions>;
}
