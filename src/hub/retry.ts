import { HubError, isTransient } from './hubErrors';

/**
 * The one retry loop of a download (file metadata and file bodies): a transient failure (a dropped
 * connection, a timeout, a 5xx or 429) is tried again with exponential backoff, a few times; and the error a
 * cancelled download ends with.
 */

export interface RetrySettings {
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** Delay before the first retry, doubled for each next one (default 500 ms). */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

/** The error of a cancelled download: the parts on disk stay, and the next download resumes from them. */
export function downloadCancelled(repo: string, file?: string): HubError {
  return new HubError('cancelled', `Download of ${repo} cancelled; it resumes where it stopped next time.`, file === undefined ? { repo } : { repo, file });
}

/**
 * Thrown by an attempt to run again at once, without a delay (it dropped what it had on disk, so the next
 * request asks for something else). With a `failure`, it counts as a failed attempt, and `failure` is thrown
 * once the retries are used up.
 */
export class RetryNow extends Error {
  override readonly name = 'RetryNow';
  constructor(readonly failure?: Error) {
    super(failure?.message ?? 'retry now');
  }
}

function sleep(ms: number, signal: AbortSignal | undefined, cancelled: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(cancelled());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it resolves. A transient error is retried after `retryDelayMs * 2^(n-1)` for the n-th
 * retry, at most `retries` times; then `exhausted` (when given) makes the error thrown. Any other error, or
 * any error once `signal` is aborted, is thrown as is; a cancel during the delay throws `cancelled()`.
 * `attempt` calls `progress()` when it moved the download forward: a connection that drops after making
 * progress does not use up the retries.
 */
export async function withRetries<T>(
  settings: RetrySettings,
  how: { cancelled: () => Error; exhausted?: (e: unknown, attempts: number) => Error },
  attempt: (progress: () => void) => Promise<T>,
): Promise<T> {
  const retries = settings.retries ?? 4;
  const baseDelay = settings.retryDelayMs ?? 500;
  let failures = 0;
  for (;;) {
    let progressed = false;
    try {
      return await attempt(() => (progressed = true));
    } catch (e) {
      if (progressed) failures = 0;
      if (e instanceof RetryNow) {
        if (e.failure && ++failures > retries) throw e.failure;
        continue;
      }
      if (settings.signal?.aborted || !isTransient(e)) throw e;
      if (failures >= retries) throw how.exhausted ? how.exhausted(e, failures + 1) : e;
      failures++;
      await sleep(baseDelay * 2 ** (failures - 1), settings.signal, how.cancelled);
    }
  }
}
