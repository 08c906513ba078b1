import type { ScoredItems } from './types';
/**
 * The generation the model is running now, shared by every request that can use it: a keystroke that
 * types what the model is producing waits for it instead of starting again (Continue's in-flight reuse).
 * It is aborted when nobody waits for it any more (after a short grace, so the next keystroke can attach)
 * or when a request for another context needs the model.
 */
export class InFlight {
  private waiters = 0;
  private graceTimer: NodeJS.Timeout | null = null;
  readonly controller = new AbortController();
  /** Raw text streamed so far (append() adds to it). */
  streamed = '';
  promise!: Promise<ScoredItems>;
  /** A block's first line as a suggestion, once it is written (never settles for a line request). */
  early: Promise<ScoredItems> = new Promise(() => undefined);
  /** Called after each streamed piece, until the generation ends. */
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly hash: string,
    readonly linePrefix: string,
    private readonly graceMs: number,
  ) {}

  get done(): boolean {
    return this.controller.signal.aborted || this.finished;
  }
  finished = false;

  /** Whether a request at `linePrefix` in the same context can wait for this generation. */
  compatible(hash: string, linePrefix: string): boolean {
    if (this.done || hash !== this.hash || !linePrefix.startsWith(this.linePrefix)) return false;
    const typed = linePrefix.slice(this.linePrefix.length);
    const streamed = this.streamed;
    return streamed.startsWith(typed) || typed.startsWith(streamed);
  }

  /** More streamed text from the model. */
  append(delta: string): void {
    this.streamed += delta;
    for (const l of [...this.listeners]) l();
  }

  /**
   * Resolves once the streamed text disagrees with `typed` (what was typed since this generation began):
   * from then on nothing it writes can serve that keystroke. Never resolves while they agree.
   */
  diverges(typed: string): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        const s = this.streamed;
        if (s.startsWith(typed) || typed.startsWith(s)) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }

  /** The generation has ended (finished or aborted): nobody is told about streamed text any more. */
  settle(): void {
    this.finished = true;
    this.listeners.clear();
  }

  /** Registers a waiter; its signal's abort releases it. */
  attach(signal?: AbortSignal): void {
    if (signal?.aborted) return;
    this.waiters++;
    if (this.graceTimer) {
      clearTimeout(this.graceTimer);
      this.graceTimer = null;
    }
    signal?.addEventListener('abort', () => this.detach(), { once: true });
  }

  private detach(): void {
    this.waiters--;
    if (this.waiters > 0 || this.done) return;
    this.graceTimer = setTimeout(() => {
      if (this.waiters === 0) this.controller.abort();
    }, this.graceMs);
    this.graceTimer.unref?.();
  }

  abort(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.controller.abort();
    this.listeners.clear();
  }
}
