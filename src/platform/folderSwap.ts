import * as fs from 'node:fs';
import { FileInUseError, isLockError, type LockRetryOptions, retryWhileLocked } from './lockRetry';

/**
 * Replacing and deleting whole folders so that a locked file (Windows: a loaded model, a virus scan) never
 * leaves half a folder. A folder is first renamed aside in one step, which fails whole while any file in it is
 * open; only the renamed copy is then deleted. rmSync(recursive) instead deletes file by file and stops at the
 * locked one, leaving a model folder without its config or tokenizer. No `vscode` import.
 */

/** Operations the helpers use; tests inject failing ones. */
export interface FolderFs {
  renameSync(from: string, to: string): void;
  rmSync(p: string, o: { recursive: true; force: true }): void;
  existsSync(p: string): boolean;
}

export interface FolderSwapOptions extends LockRetryOptions {
  fs?: FolderFs;
  /** What to tell the user when the folder stays locked (default: close the model in use). */
  hint?: string;
  /** Notes worth a log line (a renamed-aside copy left behind because it is still locked). */
  log?: (message: string) => void;
}

const IN_USE_HINT =
  'Close the model in use (select another model in every VS Code window that uses it, or close the program using it), or pick another output folder, then try again.';

/** `<dir>.tmp-old-<pid>-<time>`: a name installedModels.ts never lists as a model. */
function asideName(dir: string): string {
  return `${dir}.tmp-old-${process.pid}-${Date.now().toString(36)}`;
}

/**
 * Renames a file or folder, retrying while another program holds it (Windows: an antivirus scanning a file just
 * written); a lock that stays becomes FileInUseError naming `from`, `what` failed and what to do.
 */
export async function renameWhenFree(from: string, to: string, what: string, o: FolderSwapOptions = {}): Promise<void> {
  const f = o.fs ?? fs;
  try {
    await retryWhileLocked(() => f.renameSync(from, to), o);
  } catch (e) {
    // EPERM/EACCES on Linux are permissions, not locks: thrown as they are.
    throw isLockError(e, o.platform) ? new FileInUseError(from, what, o.hint ?? IN_USE_HINT, e) : e;
  }
}

/** Best-effort removal of a renamed-aside copy: it is already out of the way, so a lock only leaves it behind. */
async function dropAside(aside: string, o: FolderSwapOptions): Promise<void> {
  const f = o.fs ?? fs;
  try {
    await retryWhileLocked(() => f.rmSync(aside, { recursive: true, force: true }), o);
  } catch (e) {
    o.log?.(`could not delete ${aside} (${(e as Error).message}); it is no longer used and can be deleted by hand`);
  }
}

/** Deletes `dir` whole, or leaves it untouched and throws FileInUseError when a file in it stays open. */
export async function removeFolder(dir: string, o: FolderSwapOptions = {}): Promise<void> {
  const f = o.fs ?? fs;
  if (!f.existsSync(dir)) return;
  const aside = asideName(dir);
  await renameWhenFree(dir, aside, `delete ${dir}`, o);
  await dropAside(aside, o);
}

/**
 * Moves the finished folder `from` to `to`, replacing what is there. On failure `to` is as it was (the old
 * folder moved back) and `from` is left for the caller to clean up.
 */
export async function moveFolderInto(from: string, to: string, o: FolderSwapOptions = {}): Promise<void> {
  const f = o.fs ?? fs;
  const aside = f.existsSync(to) ? asideName(to) : undefined;
  if (aside) await renameWhenFree(to, aside, `replace ${to}`, o);
  try {
    await renameWhenFree(from, to, `rename ${from} to ${to}`, o);
  } catch (e) {
    if (aside) await renameWhenFree(aside, to, `restore ${to}`, o).catch(() => o.log?.(`the previous ${to} is kept as ${aside}`));
    throw e;
  }
  if (aside) await dropAside(aside, o);
}
