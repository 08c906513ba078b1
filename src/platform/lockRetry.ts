/**
 * Windows refuses to rename or delete a file another program holds open (EPERM, EBUSY, sometimes EACCES or
 * ENOTEMPTY for a folder whose files are being deleted): an antivirus scan or the search indexer reading a
 * file just written, or onnxruntime with the model loaded. The first kind lets go within a second or two, so
 * the operation is retried briefly; the second does not, and the caller then says which file and what to do.
 * On Linux and macOS an open file never blocks a rename or an unlink, and EPERM/EACCES mean a permission that
 * waiting will not change: only EBUSY is retried there. Pure (the sleep is injectable); no `vscode` import.
 */

export interface LockRetryOptions {
  /** Attempts in all (default 8: about 2.8 s of waiting with the default delay). */
  attempts?: number;
  /** Wait before the n-th retry: n * delayMs (default 100). */
  delayMs?: number;
  /** Default process.platform; tests pass 'win32'. */
  platform?: NodeJS.Platform;
  sleep?: (ms: number) => Promise<void>;
}

const WINDOWS_LOCK = new Set(['EPERM', 'EBUSY', 'EACCES', 'ENOTEMPTY']);

/** Whether `e` is a "file in use" error that may clear by itself on `platform`. */
export function isLockError(e: unknown, platform: NodeJS.Platform = process.platform): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return false;
  return platform === 'win32' ? WINDOWS_LOCK.has(code) : code === 'EBUSY';
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `op`, again after a short wait while it fails with a lock error; any other error is thrown at once. */
export async function retryWhileLocked<T>(op: () => T | Promise<T>, opts: LockRetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 8);
  const delay = opts.delayMs ?? 100;
  const sleep = opts.sleep ?? realSleep;
  for (let i = 1; ; i++) {
    try {
      return await op();
    } catch (e) {
      if (i >= attempts || !isLockError(e, opts.platform)) throw e;
      await sleep(i * delay);
    }
  }
}

/** A folder still in use after the retries: names it, what failed (`what`, e.g. "delete C:\\m") and what to do. */
export class FileInUseError extends Error {
  override readonly name = 'FileInUseError';
  constructor(
    readonly file: string,
    what: string,
    hint: string,
    override readonly cause?: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`cannot ${what}: a file in ${file} is open in another program${code ? ` (${code})` : ''}. ${hint}`);
  }
}
