import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { Prompt } from '../engine/shared/prompt';
import type { GenerateResult } from '../engine/shared/types';

/** What the completion pipeline needs of the engine (the worker client satisfies it). */
export interface Generator {
  generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks?: { signal?: AbortSignal; onText?: (delta: string) => void }): Promise<GenerateResult>;
}
