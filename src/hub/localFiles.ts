import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isInside, type PathModule } from '../platform/pathInside';
import { HubError } from './hubErrors';

/**
 * The model folder on disk as a download writes it: repo paths joined strictly inside the folder, symlinks and
 * special files removed rather than followed (a hostile workspace or an earlier process could point one at
 * ~/.bashrc), `.part` files opened without following a link, SHA-256 of a file, and free space.
 */

/** Free space kept beyond the download (DownloadModelOptions.reserveBytes). */
export const DEFAULT_RESERVE = 32 * 1024 * 1024;

export interface StatFsLike {
  bavail: number | bigint;
  bsize: number | bigint;
}

export function unsafePath(file: string, problem: string): HubError {
  return new HubError('not_found', `Refusing the file path ${JSON.stringify(file)}: ${problem}.`, { file, code: 'UnsafePath' });
}

/**
 * `dir/file` for a path repoPathProblem accepted; the resolved check is a second guard. `pathMod` is node:path
 * here; tests pass path.win32 (a drive or UNC root, backslashes, case) and path.posix.
 */
export function safeJoin(dir: string, file: string, pathMod: PathModule = path): string {
  const p = pathMod.resolve(dir, file);
  if (!isInside(dir, p, { path: pathMod })) throw unsafePath(file, 'it resolves outside the model folder or to the folder itself');
  return p;
}

/** Size of the regular file at `p`; undefined for nothing, or a symlink (not followed) or other non-file. */
export function fileSize(p: string): number | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What is at `p` when it is a `want` (undefined when nothing is). A symlink or special file there is removed,
 * never followed. A file where a folder belongs (or the reverse) is refused rather than deleted.
 */
export function ensureKind(p: string, want: 'file' | 'folder', file: string): fs.Stats | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return undefined;
  }
  if (want === 'file' ? st.isFile() : st.isDirectory()) return st;
  if (st.isFile() || st.isDirectory()) {
    throw new HubError('disk', `${file}: ${p} is a ${st.isFile() ? 'file' : 'folder'} where a ${want} belongs; move it away and try again.`, { file });
  }
  fs.unlinkSync(p);
  return undefined;
}

/** Creates the folders of `file` under `dir`, replacing a symlink planted in place of one. */
export function mkdirsInside(dir: string, file: string): void {
  let d = dir;
  for (const seg of file.split('/').slice(0, -1)) {
    d = path.join(d, seg);
    if (!ensureKind(d, 'folder', file)) fs.mkdirSync(d);
  }
}

/** Opens `part` for writing without following a symlink (O_NOFOLLOW where the platform has it). */
export function openPart(part: string, append: boolean, file: string): number {
  const k = fs.constants;
  try {
    return fs.openSync(part, k.O_WRONLY | k.O_CREAT | (append ? k.O_APPEND : k.O_TRUNC) | (k.O_NOFOLLOW ?? 0), 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new HubError('disk', `${file}: ${part} is a symlink; refusing to write through it.`, { file });
    throw e;
  }
}

export async function sha256File(p: string, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  await pipeline(fs.createReadStream(p, { highWaterMark: 1 << 20 }), h, { signal });
  return h.digest('hex');
}

/** Bytes free for an unprivileged user on the file system holding `dir` (its nearest existing ancestor). */
export async function freeBytes(dir: string, statfs: (d: string) => Promise<StatFsLike> = (d) => fs.promises.statfs(d)): Promise<number | undefined> {
  let d = path.resolve(dir);
  while (!fs.existsSync(d)) {
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  try {
    const s = await statfs(d);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return undefined; // statfs unsupported: do not block the download
  }
}
