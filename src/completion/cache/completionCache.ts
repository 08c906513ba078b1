import { LRUCache } from 'lru-cache';

export interface CachedCompletion {
  /** Post-processed suggestions, best first. */
  items: string[];
  /** The best item's estimated probability of being kept (null: not scored). */
  confidence: number | null;
}

/** How far back (typed characters) a lookup walks to find a suggestion the user is typing through. */
export const MAX_TYPED_AHEAD = 128;

/**
 * Results by (context hash, cursor line prefix). A lookup that misses walks back over what the user typed
 * since (llama.vim): a suggestion made a few keystrokes ago that starts with those keystrokes is still
 * good, minus them, and costs no model call.
 */
export class CompletionCache {
  private readonly lru: LRUCache<string, CachedCompletion>;

  /** `clock`: where the entries' age is read (tests pass their own; default performance.now). */
  constructor(max = 500, ttlMs = 5 * 60_000, clock?: { now(): number }) {
    // ttlResolution 0: read the clock on every lookup (lru-cache otherwise caches it for a real millisecond).
    this.lru = new LRUCache({ max, ttl: ttlMs, ...(clock ? { perf: clock, ttlResolution: 0 } : {}) });
  }

  set(ctxHash: string, linePrefix: string, value: CachedCompletion): void {
    if (value.items.length > 0) this.lru.set(key(ctxHash, linePrefix), value);
  }

  get(ctxHash: string, linePrefix: string): CachedCompletion | undefined {
    const exact = this.lru.get(key(ctxHash, linePrefix));
    if (exact) return exact;
    for (let k = 1; k <= Math.min(MAX_TYPED_AHEAD, linePrefix.length); k++) {
      const hit = this.lru.get(key(ctxHash, linePrefix.slice(0, linePrefix.length - k)));
      if (!hit) continue;
      const typed = linePrefix.slice(linePrefix.length - k);
      const items = hit.items.filter((t) => t.startsWith(typed) && t.length > typed.length).map((t) => t.slice(typed.length));
      if (items.length > 0) return { items, confidence: hit.confidence };
      return undefined; // the nearest earlier suggestion disagrees with what was typed
    }
    return undefined;
  }

  clear(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }
}

const key = (ctxHash: string, linePrefix: string) => `${ctxHash}\u0001${linePrefix}`;
