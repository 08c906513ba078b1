import { commonPrefixLength } from '../model/kvCache';
import type { MovedRun } from '../model/movedRuns';
import type { AnyKvCache } from '../model/onnxModel';

/** A cache built from a kept or active one: its shared prefix, plus runs of it moved to new positions. */
export interface Rebuilt {
  cache: AnyKvCache;
  runs: readonly MovedRun[];
}

/** A KV cache set aside, and how many of its positions were prompt (the rest were generated). */
interface Kept {
  cache: AnyKvCache;
  promptTokens: number;
}

export interface KeptLimits {
  /** Caches kept beside the active one at most. */
  count: number;
  /** Bytes of the kept caches at most (the oldest go first). */
  bytes: number;
  /** A request keeps a copy of the cache it starts from when it would throw away this many of its prompt tokens. */
  minDropped: number;
  /** A kept cache replaces the active one when it shares this many more tokens with the prompt (else the order of the kept ones churns over a shared first token). */
  minGain: number;
}

/**
 * Two kept caches cost 88 MB on the Qwen2.5-Coder-0.5B shape at 1,800 positions, 200 MB on the 1.5B one; a
 * larger model keeps fewer. 64 tokens: below that a re-run costs less than the copy is worth keeping.
 */
export const KEPT_LIMITS: KeptLimits = { count: 2, bytes: 256 * 1024 * 1024, minDropped: 64, minGain: 16 };

/**
 * The KV caches of recent prompts beside the active one. A request continues the cache that shares the
 * longest prefix with its prompt. One that would throw away a long run of that cache's prompt (the FIM
 * middle's anchor moving, an edit above the cursor, another file, a warm-up of the next line) works on a copy,
 * and the original stays for a request that comes back to it: a keystroke after an abandoned warm-up, the
 * file switched back to. Every cache here owns its store: nothing written to the active one reaches them.
 */
export class KeptCaches {
  private kept: Kept[] = []; // oldest first

  constructor(private readonly limits: KeptLimits = KEPT_LIMITS) {}

  /**
   * The cache to prefill `tokens` on, cut to the prefix it shares with them (never all of them: the last
   * token is run for its logits), and how many positions it reuses. `active` is the cache in use, with
   * `activePrompt` of its positions prompt.
   */
  choose(
    active: AnyKvCache,
    activePrompt: number,
    tokens: readonly number[],
    rebuild?: (prefix: AnyKvCache, shared: number, runSources: readonly AnyKvCache[]) => Rebuilt | null,
  ): { cache: AnyKvCache; reuse: number; runs: readonly MovedRun[] } {
    let best: Kept = { cache: active, promptTokens: activePrompt };
    let shared = commonPrefixLength(active.tokens, tokens);
    let from = -1;
    for (const [i, k] of this.kept.entries()) {
      const n = commonPrefixLength(k.cache.tokens, tokens);
      if (n >= shared + (from < 0 ? this.limits.minGain : 1)) [best, shared, from] = [k, n, i];
    }
    if (from >= 0) {
      this.kept.splice(from, 1);
      // Set aside as it is (no copy), however short: a warm-up that a keystroke interrupted (a changed context read
      // in passes over several pauses) goes on from it, and its head may be only the few tokens before the change.
      this.keep({ cache: active, promptTokens: activePrompt }, 1);
    }
    const reuse = Math.min(shared, tokens.length - 1);
    // A request that throws away a long run of its cache works on a copy, and the original stays (kept).
    const dropsRun = best.promptTokens - reuse >= this.limits.minDropped;
    if (dropsRun) this.keep(best);
    // Runs of the rest of the prompt may be in any cache held, at other positions: in the one dropped, or in
    // the one a warm-up abandoned between its shared head and its moved runs started from.
    const rebuilt = rebuild?.(best.cache, reuse, this.runSources(best.cache));
    if (rebuilt) return { ...rebuilt, reuse };
    return { cache: dropsRun ? best.cache.fork(reuse) : best.cache.crop(reuse), reuse, runs: [] };
  }

  /** Where moved runs may come from: the cache whose prefix is reused, then the kept ones. */
  private runSources(prefix: AnyKvCache): AnyKvCache[] {
    return [prefix, ...this.kept.map((k) => k.cache).filter((c) => c !== prefix)];
  }

  /** Token ids of the kept caches, oldest first (tests, debugging). */
  get tokenLists(): readonly (readonly number[])[] {
    return this.kept.map((k) => k.cache.tokens);
  }

  clear(): void {
    this.kept = [];
  }

  /** `minLength`: below it a cache is not worth the copy a request makes to keep it (the fork in choose()). */
  private keep(k: Kept, minLength = this.limits.minDropped): void {
    if (k.cache.length < minLength || k.cache.batch !== 1) return;
    this.kept.push(k);
    let bytes = this.kept.reduce((sum, x) => sum + x.cache.bytes, 0);
    while (this.kept.length > 0 && (this.kept.length > this.limits.count || bytes > this.limits.bytes)) {
      bytes -= (this.kept.shift() as Kept).cache.bytes;
    }
  }
}
