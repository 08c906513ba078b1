import { setTimeout as delay } from 'node:timers/promises';
import type { Prompt } from '../engine/shared/prompt';
import type { Generator } from './generator';

/**
 * A warm-up starts once the user has not typed for this long after an answer (typing runs at 100-200 ms a key): on
 * bench:pause-latency's replay, warming the line below at once after every answer at a line end took 20% more CPU on
 * the default model, nearly all of it abandoned by the next keystroke.
 */
const WARM_AFTER_IDLE_MS = 200;

/**
 * While the user reads: a prompt the next keystrokes will likely need (a changed context block, the line below after
 * Enter), prefilled into a cache kept beside the one in use (Generator.prefillAside). One warm-up at a time: a new
 * one, or any request for the model, aborts the one before. Nothing is computed until the user has stopped typing:
 * until then a keystroke costs a timer alone.
 */
export class IdleWarmer {
  private warming: { abort: AbortController; done: Promise<unknown> } | null = null;

  constructor(
    private readonly prefillAside: Generator['prefillAside'],
    private readonly idleMs = WARM_AFTER_IDLE_MS,
  ) {}

  /** Whether the backend can keep a second cache at all (a server's single slot cannot). */
  get available(): boolean {
    return this.prefillAside !== undefined;
  }

  /**
   * After idleMs, prefills what `prompt()` gives then (null: nothing worth warming); `opts.warmed` is called once
   * the whole prompt is in the cache (not when the warm-up was aborted or failed).
   */
  schedule(prompt: () => Prompt | null, opts: { warmed?: () => void } = {}): void {
    const prefillAside = this.prefillAside;
    if (!prefillAside) return;
    this.abort();
    const abort = new AbortController();
    const done = delay(this.idleMs, undefined, { signal: abort.signal })
      .then(async () => {
        const p = prompt();
        if (p === null) return;
        await prefillAside(p, { signal: abort.signal });
        if (!abort.signal.aborted) opts.warmed?.();
      })
      .catch(() => undefined) // aborted, or a warm-up that failed: the next request finds out for itself
      .finally(() => {
        if (this.warming?.abort === abort) this.warming = null;
      });
    this.warming = { abort, done };
  }

  abort(): void {
    this.warming?.abort.abort();
  }

  /** Resolves when the warm-up in progress (if any) has ended: for tests and benchmarks. */
  async idle(): Promise<void> {
    await this.warming?.done;
  }
}
