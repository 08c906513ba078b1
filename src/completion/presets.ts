import type { DecodeOptions } from '../engine/shared/decodeOptions';
import { PRESET_TABLE, presetDefaults, type PresetName } from './presetTable';
import type { SettingValues } from './settingsSchema';

/**
 * The decode presets: inline completion and Generate from Selection. Their values, the settings that change
 * them and why they are what they are: the `inline` and `generate` columns of PRESET_TABLE (presetTable.ts). For the inline preset, `maxLines` is the most lines of a block
 * suggestion; a suggestion with code right of the cursor is always one line.
 */
export type Preset = Pick<
  DecodeOptions,
  | 'temperature'
  | 'topK'
  | 'topP'
  | 'minP'
  | 'repetitionPenalty'
  | 'maxNewTokens'
  | 'maxLines'
  | 'timeBudgetMs'
  | 'partialLineMs'
  | 'stop'
  | 'seed'
  | 'speculativeTokens'
  | 'tokenHealing'
  | 'stopOnLoop'
>;
export type InlinePreset = Preset;
export type GeneratePreset = Preset;

export const INLINE_PRESET: Readonly<InlinePreset> = Object.freeze(presetDefaults('inline') as InlinePreset);
export const GENERATE_PRESET: Readonly<GeneratePreset> = Object.freeze(presetDefaults('generate') as GeneratePreset);

/** A preset as the user's (validated) settings make it: each option with a setting takes the setting's value. */
export function presetFromSettings(preset: PresetName, values: SettingValues): Preset {
  const out = presetDefaults(preset) as Record<string, unknown>;
  for (const row of PRESET_TABLE) {
    const setting = row[preset]?.setting;
    if (setting && values[setting.key] !== undefined) out[row.key] = values[setting.key];
  }
  return out as unknown as Preset;
}

export type InlineMode = 'line' | 'block';

/** One line when code follows the cursor; a block on an empty line or after a block opener. */
export function inlineMode(linePrefix: string, lineSuffix: string): InlineMode {
  if (lineSuffix.trim() !== '') return 'line';
  if (linePrefix.trim() === '' || /[:{([]\s*$|=>\s*$/.test(linePrefix)) return 'block';
  return 'line';
}

export function inlineDecodeOptions(p: InlinePreset, mode: InlineMode, linePrefix: string): Partial<DecodeOptions> {
  // After a block opener the completion starts on the next line: the empty rest of the line counts as one.
  const startsOnNextLine = linePrefix.trim() !== '' && mode === 'block';
  return { ...p, stop: [...p.stop], maxLines: mode === 'line' ? 1 : p.maxLines + (startsOnNextLine ? 1 : 0) };
}
