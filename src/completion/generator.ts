import type { DecodeOptions } from '../engine/decodeOptions';
import type { Prompt } from '../engine/prompt';
import type { GenerateResult } from '../engine/types';

/** What the completion pipeline needs of the engine (the worker client satisfies it). */
export interface Generator {
  generate(
    prompt: Prompt,
    options: Partial<DecodeOptions>,
    hooks?: { signal?: AbortSignal; onText?: (delta: string) => void },
  ): Promise<GenerateResult>;
}
