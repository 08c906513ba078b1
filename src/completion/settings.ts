import type { CompletionSettings } from './types';
import { presetFromSettings } from './presets';
import { validateSettings, type SettingValues } from './settingsSchema';

/** Turns validated setting values into the pipeline's settings. */
export function completionSettings(v: SettingValues): CompletionSettings {
  const n = (k: string) => v[k] as number;
  const preset = presetFromSettings('inline', v);
  return {
    preset,
    budget: {
      prefixLines: n('context.prefixLines'),
      suffixLines: n('context.suffixLines'),
      prefixChars: n('context.prefixChars'),
      suffixChars: n('context.suffixChars'),
      snapLines: 16,
    },
    extraContextChars: n('context.extraChars'),
    context: {
      maxShare: n('context.maxShare'),
      sources: {
        imports: v['context.imports'] as boolean,
        definitions: v['context.definitions'] as boolean,
        similar: v['context.similar'] as boolean,
        ring: v['context.recent'] as boolean,
      },
    },
    prefetch: v['inline.prefetch'] as boolean,
    alternatives: n('inline.alternatives'),
    minConfidence: n('inline.minConfidence'),
  };
}

/** The settings with every default: CLI, benchmarks and tests. */
export function defaultCompletionSettings(): CompletionSettings {
  return completionSettings(validateSettings(() => undefined).values);
}
