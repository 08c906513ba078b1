import { DECODE_TABLE, type OptionType } from '../engine/shared/decodeTable';
import { PRESET_TABLE } from './presetTable';
import { MOVE_CACHED_RUNS_OVER_MS } from '../engine/shared/engineOptions';
import { DEVICE_SETTINGS } from '../engine/shared/device';

/**
 * Every numeric/boolean/string/string-list setting: its key under `ghostline.`, default, bounds or allowed
 * values, and description. package.json's `contributes.configuration` must agree (a test checks), and
 * validation uses the same table.
 */
export interface SettingSpec {
  key: string;
  type: OptionType | 'string';
  default: number | boolean | string | string[];
  /** For a list: most strings. */
  min?: number;
  max?: number;
  /** For a list: the longest string. */
  maxLength?: number;
  /** The allowed strings, for a `string` setting. */
  enum?: readonly string[];
  description: string;
}

/** The decode settings of both presets, from PRESET_TABLE (one setting may serve both, as engine.speculativeTokens). */
function decodeSettings(): SettingSpec[] {
  const out = new Map<string, SettingSpec>();
  const option = new Map(DECODE_TABLE.map((r) => [r.key, r]));
  for (const row of PRESET_TABLE) {
    for (const preset of ['inline', 'generate'] as const) {
      const col = row[preset];
      if (!col?.setting || out.has(col.setting.key)) continue;
      const { key, min, max, description } = col.setting;
      const engine = option.get(row.key);
      const type = col.setting.type ?? engine?.type;
      if (!engine || !type) throw new Error(`preset row ${row.key} has no engine option`);
      out.set(key, { key, type, default: col.default, min, max, ...(engine.maxLength ? { maxLength: engine.maxLength } : {}), description });
    }
  }
  return [...out.values()];
}

export const SETTINGS: readonly SettingSpec[] = [
  ...decodeSettings(),
  { key: 'inline.prefetch', type: 'boolean', default: true, description: 'While a suggestion is shown, compute the next one as if it were accepted.' },
  {
    key: 'inline.alternatives',
    type: 'integer',
    default: 3,
    min: 1,
    max: 8,
    description: 'Suggestions computed on an explicit trigger (Alt+\\), to cycle with Alt+] and Alt+[.',
  },
  {
    key: 'inline.minConfidence',
    type: 'number',
    default: 0.1,
    min: 0,
    max: 1,
    description:
      "Show a suggestion only when its estimated probability of being kept is at least this (0: show every one). Estimated from the model's own token probabilities with the model's calibration; Alt+\\ always shows.",
  },
  {
    key: 'debounceMs',
    type: 'integer',
    default: -1,
    min: -1,
    max: 2000,
    description: 'Delay before asking the model after a keystroke, in ms. -1: adaptive, from your typing rhythm.',
  },
  { key: 'context.prefixLines', type: 'integer', default: 256, min: 0, max: 5000, description: 'Lines above the cursor given to the model at most.' },
  { key: 'context.suffixLines', type: 'integer', default: 64, min: 0, max: 5000, description: 'Lines below the cursor given to the model at most.' },
  {
    key: 'context.prefixChars',
    type: 'integer',
    default: 3000,
    min: 100,
    max: 200000,
    description: 'Characters before the cursor given to the model at most.',
  },
  { key: 'context.suffixChars', type: 'integer', default: 1000, min: 0, max: 100000, description: 'Characters after the cursor given to the model at most.' },
  {
    key: 'context.extraChars',
    type: 'integer',
    default: 2000,
    min: 0,
    max: 100000,
    description:
      'Characters of context from other files at most (repository context: declarations the file imports, definitions at the cursor, similar code, recently used files). 0 turns it off.',
  },
  {
    key: 'context.maxShare',
    type: 'number',
    default: 0.25,
    min: 0,
    max: 0.75,
    description: "Share of the model's context window that context from other files may take at most, when the window is full.",
  },
  {
    key: 'context.imports',
    type: 'boolean',
    default: true,
    description:
      'Context: the declarations of the names the file imports from workspace files, of the classes the class at the cursor extends, and of the classes of the objects the cursor line uses, as their declarations type them (TypeScript, JavaScript, Python).',
  },
  {
    key: 'context.definitions',
    type: 'boolean',
    default: true,
    description: "Context: the declarations of the symbols at the cursor, from the editor's language features (go to definition).",
  },
  {
    key: 'context.similar',
    type: 'boolean',
    default: true,
    description: 'Context: code in other open or workspace files that looks like the code at the cursor.',
  },
  {
    key: 'context.recent',
    type: 'boolean',
    default: true,
    description: 'Context: code around where you last were in files you recently left, saved or edited.',
  },
  {
    key: 'engine.threads',
    type: 'integer',
    default: 0,
    min: 0,
    max: 64,
    description: 'CPU threads for the model (0: automatic). Applies on the next model load.',
  },
  {
    key: 'engine.moveCachedRunsOverMs',
    type: 'integer',
    default: MOVE_CACHED_RUNS_OVER_MS,
    min: -1,
    max: 600000,
    description:
      'When the start of the context window or the middle of a fill-in-the-middle prompt moves, reuse the cached text at its new place (as llama.cpp --cache-reuse does) instead of computing it again, if computing it again would take longer than this many milliseconds. 0: always; -1: never (suggestions exactly as from a fresh start, at the cost of waits of seconds on large models). Converted models only. Applies on the next model load.',
  },
  {
    key: 'nextEdit.enable',
    type: 'boolean',
    default: false,
    description:
      "After you change code, propose the edit that follows it a few lines away (next edit). Needs a next-edit model (ghostline.nextEdit.modelPath, e.g. an ONNX folder of Sweep's next-edit 0.5B). Tab jumps to a proposed edit and Tab again applies it; Esc dismisses. An inline suggestion at the cursor keeps Tab.",
  },
  {
    key: 'engine.device',
    type: 'string',
    default: 'auto',
    enum: DEVICE_SETTINGS,
    description:
      'Where the local model runs. auto: on the first load of a model on this machine, a short prefill and decode are timed on the CPU and on the GPU (WebGPU: Metal on macOS, Direct3D 12 on Windows, Vulkan on Linux x64) and the faster is kept and remembered (Ghostline: Measure Devices Again forgets it). cpu: never the GPU. gpu: the GPU when one can be opened, else the CPU with a message. A GPU that fails mid-session hands over to the CPU. Applies on the next model load.',
  },
];

export type SettingValues = Record<string, number | boolean | string | string[]>;

/** What one setting may hold, for validateValue: every Ghostline setting, decode, pipeline or server, uses it. */
export interface ValueSpec {
  type: OptionType | 'string';
  default: number | boolean | string | string[];
  /** For a list: most strings. */
  min?: number;
  max?: number;
  /** For a list: the longest string. */
  maxLength?: number;
  /** Allowed strings (after trimming). */
  enum?: readonly string[];
}

/**
 * The one rule for a value written in settings.json (where anything may be written): a wrong type or a
 * string outside the enum is ignored and the default used; a number out of range, or a fraction where a whole
 * number is wanted, is clamped and rounded. Either way `problem` names the setting and says what is used.
 */
export function validateValue(spec: ValueSpec, v: unknown, name: string): { value: ValueSpec['default']; problem?: string } {
  const fallback = { value: spec.default };
  if (v === undefined || v === null) return fallback;
  switch (spec.type) {
    case 'boolean':
      return typeof v === 'boolean' ? { value: v } : { ...fallback, problem: `${name} must be true or false; using ${spec.default}.` };
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string')
        ? boundedList(spec, v as string[], name)
        : { ...fallback, problem: `${name} must be a list of strings; ignored.` };
    case 'string': {
      if (typeof v !== 'string') return { ...fallback, problem: `${name} must be a string; using ${JSON.stringify(spec.default)}.` };
      const t = v.trim();
      if (spec.enum && !spec.enum.includes(t))
        return { ...fallback, problem: `${name} must be one of ${spec.enum.join(', ')}; ${JSON.stringify(v)} ignored, using ${JSON.stringify(spec.default)}.` };
      return { value: t };
    }
  }
  if (typeof v !== 'number' || !Number.isFinite(v))
    return { ...fallback, problem: `${name} must be a number; ${JSON.stringify(v)} ignored, using ${spec.default}.` };
  let n = spec.type === 'integer' ? Math.round(v) : v;
  if (spec.min !== undefined && n < spec.min) n = spec.min;
  if (spec.max !== undefined && n > spec.max) n = spec.max;
  if (n === v) return { value: n };
  const range = `[${spec.min ?? '-∞'}, ${spec.max ?? '∞'}]`;
  return { value: n, problem: `${name} = ${v} is out of range ${range}${spec.type === 'integer' ? ' or not a whole number' : ''}; using ${n}.` };
}

/** Validates every pipeline and decode setting with validateValue; each problem is reported once. */
export function validateSettings(raw: (key: string) => unknown): { values: SettingValues; problems: string[] } {
  const values: SettingValues = {};
  const problems: string[] = [];
  for (const spec of SETTINGS) {
    const r = validateValue(spec, raw(spec.key), `ghostline.${spec.key}`);
    values[spec.key] = r.value as SettingValues[string];
    if (r.problem) problems.push(r.problem);
  }
  return { values, problems };
}

/** A list's strings without empty ones, at most `max` of them and none longer than `maxLength`, saying what was left out. */
function boundedList(spec: ValueSpec, list: string[], name: string): { value: string[]; problem?: string } {
  const tooLong = list.filter((x) => x.length > (spec.maxLength ?? Infinity));
  const kept = list.filter((x) => x.length > 0 && x.length <= (spec.maxLength ?? Infinity));
  const problems: string[] = [];
  if (tooLong.length > 0) problems.push(`${tooLong.length} string(s) longer than ${spec.maxLength} characters ignored`);
  if (spec.max !== undefined && kept.length > spec.max) problems.push(`only the first ${spec.max} of ${kept.length} strings are used`);
  const value = spec.max !== undefined ? kept.slice(0, spec.max) : kept;
  return problems.length > 0 ? { value, problem: `${name}: ${problems.join('; ')}.` } : { value };
}
