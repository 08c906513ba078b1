import { LRUCache } from 'lru-cache';
import type { ExtraChunk } from '../types';

/** How long a file's changed context may wait for the user to pause before a request takes it anyway. */
export const MAX_CONTEXT_WAIT_MS = 10_000;

/**
 * When a change of a file's extra context reaches the model. A changed chunk (the imports of a new block, a new
 * similar window, a definition) makes the model read everything after it again, the file's whole window included:
 * hundreds of tokens, seconds for a 0.5B model on a CPU, and on the typing replay the slowest pauses were such
 * re-reads, paid by the keystroke after the change. So while the new context waits to be prefilled aside in idle
 * time (CompletionService's warm-up), requests keep the context the KV cache holds (the file's last one), and
 * take the new one once it is warm, or MAX_CONTEXT_WAIT_MS after the first request that kept the old one.
 */
export class DeferredContext {
  /** Per file, since when a request has kept the old context. */
  private readonly waitingSince = new LRUCache<string, number>({ max: 64 });
  /** The context settings the last request was built with: a change of them is the user's, and applies at once. */
  private settings: string | undefined;

  constructor(private readonly maxWaitMs = MAX_CONTEXT_WAIT_MS) {}

  /**
   * The context a request sends: the file's last one (`last`; undefined: none yet) while the fresh one differs
   * and may still wait, else the fresh one. `deferred`: the fresh one waits (a warm-up should prefill it).
   * `settings`: the context settings it was built with, in any stable form.
   */
  choose(
    path: string,
    fresh: ExtraChunk[],
    last: readonly ExtraChunk[] | undefined,
    now: number,
    settings: string,
  ): { extra: ExtraChunk[]; deferred: boolean } {
    if (last === undefined || settings !== this.settings || sameContext(fresh, last)) return { extra: fresh, deferred: false };
    const since = this.waitingSince.get(path) ?? now;
    if (now - since >= this.maxWaitMs) return { extra: fresh, deferred: false };
    return { extra: [...last], deferred: true };
  }

  /** A request sent what choose() gave: the wait starts with its first deferred request, and ends with one that was not. */
  sent(path: string, deferred: boolean, now: number, settings: string): void {
    if (settings !== this.settings) this.waitingSince.clear();
    this.settings = settings;
    if (!deferred) this.waitingSince.delete(path);
    else if (!this.waitingSince.has(path)) this.waitingSince.set(path, now);
  }
}

/** Whether two contexts make the same prompt bytes (the chunks' sources are not in the prompt). */
export function sameContext(a: readonly ExtraChunk[], b: readonly ExtraChunk[]): boolean {
  return a.length === b.length && a.every((c, i) => c.path === b[i].path && c.text === b[i].text);
}
