import { GENERATE_PRESET, INLINE_PRESET } from './presets';

/**
 * Every numeric/boolean/string-list setting: its key under `ghostline.`, default, bounds and description.
 * package.json's `contributes.configuration` must agree (a test checks), and validation uses the same table.
 */
export interface SettingSpec {
  key: string;
  type: 'number' | 'integer' | 'boolean' | 'string[]';
  default: number | boolean | string[];
  min?: number;
  max?: number;
  description: string;
}

export const SETTINGS: readonly SettingSpec[] = [
  { key: 'inline.temperature', type: 'number', default: INLINE_PRESET.temperature, min: 0, max: 2, description: 'Inline completion temperature (0: greedy).' },
  { key: 'inline.topK', type: 'integer', default: INLINE_PRESET.topK, min: 0, max: 1000, description: 'Inline completion top-k (0: off).' },
  { key: 'inline.topP', type: 'number', default: INLINE_PRESET.topP, min: 0, max: 1, description: 'Inline completion top-p (1: off).' },
  { key: 'inline.minP', type: 'number', default: INLINE_PRESET.minP, min: 0, max: 1, description: 'Inline completion min-p (0: off).' },
  { key: 'inline.repetitionPenalty', type: 'number', default: INLINE_PRESET.repetitionPenalty, min: 1, max: 2, description: 'Inline completion repetition penalty (1: off).' },
  { key: 'inline.maxNewTokens', type: 'integer', default: INLINE_PRESET.maxNewTokens, min: 1, max: 512, description: 'Most tokens an inline suggestion may have.' },
  { key: 'inline.maxLines', type: 'integer', default: INLINE_PRESET.blockLines, min: 1, max: 50, description: 'Most lines of a block suggestion (on an empty line or after a block opener). With text right of the cursor, suggestions are always one line.' },
  { key: 'inline.timeBudgetMs', type: 'integer', default: INLINE_PRESET.timeBudgetMs, min: 50, max: 10000, description: 'Once the first line is complete, stop generating after this many milliseconds.' },
  { key: 'inline.stop', type: 'string[]', default: INLINE_PRESET.stop, description: 'Extra stop strings for inline suggestions.' },
  { key: 'inline.prefetch', type: 'boolean', default: true, description: 'While a suggestion is shown, compute the next one as if it were accepted.' },
  { key: 'inline.alternatives', type: 'integer', default: 3, min: 1, max: 8, description: 'Suggestions computed on an explicit trigger (Alt+\\), to cycle with Alt+] and Alt+[.' },
  { key: 'generate.temperature', type: 'number', default: GENERATE_PRESET.temperature, min: 0, max: 2, description: 'Generate from Selection: temperature (0: greedy).' },
  { key: 'generate.topK', type: 'integer', default: GENERATE_PRESET.topK, min: 0, max: 1000, description: 'Generate from Selection: top-k (0: off).' },
  { key: 'generate.topP', type: 'number', default: GENERATE_PRESET.topP, min: 0, max: 1, description: 'Generate from Selection: top-p (1: off).' },
  { key: 'generate.minP', type: 'number', default: GENERATE_PRESET.minP, min: 0, max: 1, description: 'Generate from Selection: min-p (0: off).' },
  { key: 'generate.repetitionPenalty', type: 'number', default: GENERATE_PRESET.repetitionPenalty, min: 1, max: 2, description: 'Generate from Selection: repetition penalty (1: off).' },
  { key: 'generate.maxNewTokens', type: 'integer', default: GENERATE_PRESET.maxNewTokens, min: 1, max: 2048, description: 'Generate from Selection: most tokens generated.' },
  { key: 'generate.maxLines', type: 'integer', default: GENERATE_PRESET.maxLines, min: 0, max: 1000, description: 'Generate from Selection: most lines (0: no limit).' },
  { key: 'generate.stop', type: 'string[]', default: GENERATE_PRESET.stop, description: 'Generate from Selection: stop strings.' },
  { key: 'debounceMs', type: 'integer', default: -1, min: -1, max: 2000, description: 'Delay before asking the model after a keystroke, in ms. -1: adaptive, from your typing rhythm.' },
  { key: 'context.prefixLines', type: 'integer', default: 256, min: 0, max: 5000, description: 'Lines above the cursor given to the model at most.' },
  { key: 'context.suffixLines', type: 'integer', default: 64, min: 0, max: 5000, description: 'Lines below the cursor given to the model at most.' },
  { key: 'context.prefixChars', type: 'integer', default: 3000, min: 100, max: 200000, description: 'Characters before the cursor given to the model at most.' },
  { key: 'context.suffixChars', type: 'integer', default: 1000, min: 0, max: 100000, description: 'Characters after the cursor given to the model at most.' },
  { key: 'context.extraChars', type: 'integer', default: 2000, min: 0, max: 100000, description: 'Characters of context from other recently used files (models with repo-level tokens only).' },
  { key: 'engine.speculativeTokens', type: 'integer', default: INLINE_PRESET.speculativeTokens, min: 0, max: 32, description: 'Prompt-lookup speculative decoding: up to this many tokens guessed from the context and checked in one model pass (0: off). Changes the speed only: suggestions keep the same distribution.' },
  { key: 'engine.threads', type: 'integer', default: 0, min: 0, max: 64, description: 'CPU threads for the model (0: automatic). Applies on the next model load.' },
];

export type SettingValues = Record<string, number | boolean | string[]>;

/**
 * Validates raw values (from settings.json, where anything may be written): a wrong type is ignored,
 * an out-of-range number is clamped; each problem is reported once with the setting's full name.
 */
export function validateSettings(raw: (key: string) => unknown): { values: SettingValues; problems: string[] } {
  const values: SettingValues = {};
  const problems: string[] = [];
  for (const spec of SETTINGS) {
    const v = raw(spec.key);
    const name = `ghostline.${spec.key}`;
    values[spec.key] = spec.default;
    if (v === undefined || v === null) continue;
    if (spec.type === 'boolean') {
      if (typeof v === 'boolean') values[spec.key] = v;
      else problems.push(`${name} must be true or false; using ${spec.default}.`);
      continue;
    }
    if (spec.type === 'string[]') {
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) values[spec.key] = (v as string[]).filter((x) => x.length > 0);
      else problems.push(`${name} must be a list of strings; ignored.`);
      continue;
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      problems.push(`${name} must be a number; ${JSON.stringify(v)} ignored, using ${spec.default}.`);
      continue;
    }
    let n = spec.type === 'integer' ? Math.round(v) : v;
    if (spec.min !== undefined && n < spec.min) n = spec.min;
    if (spec.max !== undefined && n > spec.max) n = spec.max;
    if (n !== v) problems.push(`${name} = ${v} is out of range [${spec.min}, ${spec.max}]${spec.type === 'integer' ? ' or not a whole number' : ''}; using ${n}.`);
    values[spec.key] = n;
  }
  return { values, problems };
}
