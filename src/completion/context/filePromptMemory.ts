import { LRUCache } from 'lru-cache';
import type { ExtraChunk } from '../types';
import { CharsPerTokenEstimate } from './charsPerTokenEstimate';

/**
 * What the completion service learns per file between requests, so that the next prompt there reuses the KV
 * cache and fills the window: where the last prompt's window started (documentContext's keepStart), its extra
 * context, and the file's characters per token (CharsPerTokenEstimate). Bounded to the recently used files.
 */
export class FilePromptMemory {
  private readonly windowStarts = new LRUCache<string, number>({ max: 256 });
  private readonly contexts = new LRUCache<string, readonly ExtraChunk[]>({ max: 64 });
  private estimate: CharsPerTokenEstimate | null = null;

  /** `measured`: the model's own characters per token (undefined: prompts are sized conservatively). */
  constructor(private readonly measured: () => number | undefined) {}

  /** The window start the next request in this file keeps while its prefix fits. */
  windowStart(path: string): number | undefined {
    return this.windowStarts.get(path);
  }

  rememberWindowStart(path: string, start: number): void {
    this.windowStarts.set(path, start);
  }

  /**
   * The extra context of the last prompt in this file (undefined: none yet): what it showed holds its place
   * (assembleContext), and is what the KV cache holds (deferredContext.ts).
   */
  shownContext(path: string): readonly ExtraChunk[] | undefined {
    return this.contexts.get(path);
  }

  rememberContext(path: string, extra: readonly ExtraChunk[]): void {
    this.contexts.set(path, extra);
  }

  /** Characters per token to size this file's prompts with (undefined: the conservative default). */
  charsPerToken(path: string): number | undefined {
    const measured = this.measured();
    if (measured === undefined) return undefined;
    this.estimate ??= new CharsPerTokenEstimate(measured);
    return this.estimate.get(path);
  }

  /** A prompt of `chars` characters of this file's text tokenized to `tokens` tokens (not truncated). */
  observe(path: string, chars: number, tokens: number): void {
    this.estimate?.observe(path, chars, tokens);
  }
}
