/** A run of cached positions that reappears at other positions of a new prompt. */
export interface MovedRun {
  /** First position in the cache. */
  from: number;
  /** First position in the new prompt. */
  to: number;
  length: number;
}

/** Tokens a run is looked up by: shorter keys give more candidates to extend, longer ones miss short runs. */
const KEY_TOKENS = 8;
/** Candidates extended per prompt position at most (repetitive code has many equal keys). */
const MAX_CANDIDATES = 8;

/**
 * The runs of `cached` from position `cachedFrom` on (by default `shared`: the prefix both share) that reappear
 * in `prompt` after its first `shared` positions, each at least `minRun` tokens, left to right, never covering
 * the prompt's last token (it is always run, for its logits). A moved window start (the text kept, shifted to
 * earlier positions) or a moved FIM anchor (the suffix shifted later) gives one long run each; between runs are
 * the tokens to prefill. `cachedFrom` below `shared` looks for runs in another cache than the one whose prefix
 * is reused (engine.ts: a warm-up abandoned before its moved runs leaves them in the cache it started from).
 */
export function planMovedRuns(cached: readonly number[], prompt: readonly number[], shared: number, minRun: number, cachedFrom = shared): MovedRun[] {
  const end = prompt.length - 1;
  if (minRun < KEY_TOKENS || end - shared < minRun || cached.length - cachedFrom < minRun) return [];
  const key = (a: readonly number[], i: number) => a.slice(i, i + KEY_TOKENS).join(',');
  const index = new Map<string, number[]>();
  for (let p = cachedFrom; p + minRun <= cached.length; p++) {
    const k = key(cached, p);
    const list = index.get(k);
    if (!list) index.set(k, [p]);
    else if (list.length < MAX_CANDIDATES) list.push(p);
  }
  const runs: MovedRun[] = [];
  for (let c = shared; c + minRun <= end; ) {
    let best: MovedRun | null = null;
    for (const p of index.get(key(prompt, c)) ?? []) {
      let n = 0;
      while (p + n < cached.length && c + n < end && cached[p + n] === prompt[c + n]) n++;
      if (n >= minRun && (!best || n > best.length)) best = { from: p, to: c, length: n };
    }
    if (best) {
      runs.push(best);
      c += best.length;
    } else c++;
  }
  return runs;
}
