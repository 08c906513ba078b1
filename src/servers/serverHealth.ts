import { ServerError } from './serverErrors';

export type HealthState = 'up' | 'down';

/**
 * Whether the server is worth asking: after a failure it is left alone for a backoff that doubles with
 * each failure in a row (1 s, 2 s, 4 s ... 30 s; longer when the server sent Retry-After), then the next
 * request tries it again. While it is down, requests fail at once (or go to the local model) instead of
 * each waiting for its own timeout.
 */
export class ServerHealth {
  private failures = 0;
  private retryAt = 0;
  lastError: Error | null = null;
  /** Called when the state flips (status bar, log). */
  onChange?: (state: HealthState, error: Error | null) => void;

  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly baseMs = 1000,
    private readonly maxMs = 30_000,
  ) {}

  get state(): HealthState {
    return this.failures === 0 ? 'up' : 'down';
  }

  /** True when a request may go to the server: it is up, or its backoff has passed. */
  available(): boolean {
    return this.failures === 0 || this.now() >= this.retryAt;
  }

  /** Milliseconds until the server is tried again (0 when it may be asked now). */
  retryInMs(): number {
    return this.available() ? 0 : this.retryAt - this.now();
  }

  failed(err: Error): void {
    const wasUp = this.failures === 0;
    this.failures++;
    const backoff = Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
    const asked = err instanceof ServerError ? (err.retryAfterMs ?? 0) : 0;
    this.retryAt = this.now() + Math.max(backoff, asked);
    this.lastError = err;
    if (wasUp) this.onChange?.('down', err);
  }

  succeeded(): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.lastError = null;
    this.onChange?.('up', null);
  }
}
