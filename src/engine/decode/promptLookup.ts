/**
 * Prompt-lookup drafting (speculative decoding without a draft model): code repeats itself, so the tokens
 * that followed the last occurrence of the current n-gram are a good guess of what comes next.
 * Returns up to `max` draft tokens, trying n-grams of `maxNgram` down to 1 tokens; [] when nothing matches.
 */
export function lookupDraft(history: readonly number[], max: number, maxNgram = 3): number[] {
  const len = history.length;
  for (let n = Math.min(maxNgram, len - 1); n >= 1; n--) {
    // Most recent earlier occurrence of the last n tokens.
    for (let start = len - n - 1; start >= 0; start--) {
      let match = true;
      for (let k = 0; k < n; k++) {
        if (history[start + k] !== history[len - n + k]) {
          match = false;
          break;
        }
      }
      if (!match) continue;
      const from = start + n;
      const draft = history.slice(from, Math.min(from + max, len));
      if (draft.length > 0) return draft;
    }
  }
  return [];
}
