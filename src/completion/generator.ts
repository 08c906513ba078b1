import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { Prompt } from '../engine/shared/prompt';
import type { GenerateHooks, GenerateResult } from '../engine/shared/types';
import type { ExtraChunk } from './types';

/** The pieces of a fill-in-the-middle request, for servers that build the prompt themselves (llama.cpp /infill, Ollama's suffix). */
export interface InfillParts {
  /** Lines above the cursor line. */
  prefix: string;
  /** The rest of the cursor line and the lines below. */
  suffix: string;
  /** The cursor line up to the cursor. */
  middle: string;
  extra: ExtraChunk[];
}

/** The engine's hooks, plus the request as parts, which the pipeline sets for servers that build the prompt. */
export interface BackendHooks extends GenerateHooks {
  /** Set by the completion pipeline: the request as parts (local engines use the prompt). */
  infill?: InfillParts;
}

/** What the completion pipeline needs of a backend: the local worker client, or a server over HTTP. */
export interface Generator {
  generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks?: BackendHooks): Promise<GenerateResult>;
  /**
   * Puts the prompt (or, for servers that build it, `hooks.infill`) into the backend's prompt cache without
   * generating, so the next completion for it starts at once (a server's warm-up). Rejects as generate
   * does; resolves when cancelled. Absent: the backend has no such request (a caller completes instead).
   */
  prefill?(prompt: Prompt, hooks?: BackendHooks): Promise<void>;
  /**
   * Prefills the prompt into a cache kept beside the one in use, without generating: a request for either
   * prompt then starts at once. Resolves when cancelled (what was prefilled stays kept). Absent: the backend
   * keeps one prompt cache, which a warm-up of another prompt would evict (a server's slot).
   */
  prefillAside?(prompt: Prompt, hooks?: { signal?: AbortSignal }): Promise<void>;
}
