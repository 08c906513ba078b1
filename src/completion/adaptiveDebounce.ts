/**
 * Debounce from the user's typing rhythm (after Tabby): wait a little longer than the user's usual gap
 * between keystrokes while they type in bursts, so a request starts when they pause, never while they type.
 * Bounded by [minMs, maxMs]; a fixed setting overrides it.
 */
export class AdaptiveDebounce {
  private readonly gaps: number[] = [];
  private last = -Infinity;

  constructor(
    private readonly minMs = 15,
    private readonly maxMs = 250,
    private readonly window = 12,
  ) {}

  /** Records a keystroke (a change of the document) at time `now` (ms). */
  keystroke(now: number): void {
    const gap = now - this.last;
    this.last = now;
    // Gaps over a second are pauses, not rhythm.
    if (gap > 0 && gap < 1000) {
      this.gaps.push(gap);
      if (this.gaps.length > this.window) this.gaps.shift();
    }
  }

  /** The delay before asking the model, in ms. */
  delay(fixedMs?: number): number {
    if (fixedMs !== undefined && fixedMs >= 0) return fixedMs;
    if (this.gaps.length < 3) return this.minMs;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    return Math.round(Math.max(this.minMs, Math.min(this.maxMs, median * 1.2)));
  }
}
