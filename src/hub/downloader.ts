import * as fs from 'node:fs';
import * as path from 'node:path';
import { fetchFile } from './fetchFile';
import { formatBytes } from './format';
import type { HttpTransport } from '../net/httpTransport';
import { fileMetadata, resolveEndpoint, type FileMetadata, type HubOptions } from './hubClient';
import { HubError } from './hubErrors';
import { repoIdProblem, repoPathProblem, resolveUrl } from './repoRef';
import { withTransport } from './hubRequest';
import { DEFAULT_RESERVE, ensureKind, fileSize, freeBytes, mkdirsInside, safeJoin, sha256File, unsafePath, type StatFsLike } from './localFiles';
import { isLockError, retryWhileLocked } from '../platform/lockRetry';
import { caseCollision, portablePathProblem } from './portablePath';
import { modelFolderName, type ModelFile } from './recommended';
import { downloadCancelled, withRetries } from './retry';
import { SpeedMeter } from './speedMeter';

/**
 * Downloads a model's files from the hub into `<storageDir>/models/<owner>--<name>/`:
 * every repo path checked first (no request for a path that could leave the folder), HEAD for size and
 * sha256, a free-space check, then each file into `<file>.part` (never through a symlink), resumed with a
 * Range request after a dropped connection (a few retries with backoff), checked (size, and sha256 for
 * LFS files) and renamed when whole. While files are missing the folder holds an `.incomplete` marker;
 * at the end a `ghostline-model.json` manifest records the repo, revision, commit and checksums.
 * One file's fetch is fetchFile.ts (its body streamed by writeBody.ts), the retry loop retry.ts, and the
 * folder's guards (paths, symlinks, free space, sha256) localFiles.ts.
 */

export const INCOMPLETE_MARKER = '.incomplete';
export const MANIFEST = 'ghostline-model.json';

export interface DownloadProgress {
  phase: 'metadata' | 'download' | 'verify' | 'done';
  /** The file being fetched (repo path). */
  file?: string;
  fileIndex: number;
  fileCount: number;
  /** Bytes on disk for the whole model (including resumed parts and files already present). */
  bytes: number;
  /** Total bytes of the model, when known. */
  total?: number;
  /** Recent transfer speed in bytes/s (sliding window of a few seconds). */
  speed: number;
  /** Seconds left at that speed; undefined when unknown. */
  etaSeconds?: number;
}

export interface DownloadModelOptions extends HubOptions {
  repo: string;
  revision?: string;
  files: readonly ModelFile[];
  /** The extension's global storage folder; models go to `<storageDir>/models/<owner>--<name>/`. */
  storageDir: string;
  /** Folder to write into instead of `<storageDir>/models/<owner>--<name>/` (checkpoints to convert). */
  destDir?: string;
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  /** Retries of a dropped connection per file (default 4), with exponential backoff from `retryDelayMs` (500). */
  retries?: number;
  retryDelayMs?: number;
  /** Free space kept beyond the download (default 32 MiB). */
  reserveBytes?: number;
  /** Free-space probe (default fs.promises.statfs); tests inject a small one. */
  statfs?: (dir: string) => Promise<StatFsLike>;
  /** Minimum interval between progress callbacks in ms (default 100). */
  progressIntervalMs?: number;
  /** Cap for a file whose size no header gives (default 64 GiB): a longer body is stopped and removed. */
  maxUnsizedBytes?: number;
  /** While such a file streams, free space is checked every this many bytes (default 64 MiB). */
  spaceCheckBytes?: number;
  /** Notes worth a log line (a file already present that failed its SHA-256 and is fetched again). */
  log?: (message: string) => void;
}

export interface DownloadedFile {
  path: string;
  size: number;
  sha256?: string;
  /** Already present and complete before this call. */
  skipped?: boolean;
}

export interface DownloadResult {
  repo: string;
  revision: string;
  commit?: string;
  dir: string;
  files: DownloadedFile[];
  bytes: number;
}

export interface ModelManifest {
  repo: string;
  revision: string;
  commit?: string;
  endpoint: string;
  downloadedAt: string;
  files: { path: string; size: number; sha256?: string }[];
}

export function modelDir(storageDir: string, repo: string): string {
  return path.join(storageDir, 'models', modelFolderName(repo));
}

/** Deletes a file about to be downloaded again; on Windows the engine's open copy of it blocks that. */
async function removeOldVersion(dest: string, file: string): Promise<void> {
  try {
    await retryWhileLocked(() => fs.rmSync(dest, { force: true }));
  } catch (e) {
    if (!isLockError(e)) throw e;
    throw new HubError('disk', `${file}: ${dest} is open in another program, most likely as the model in use: select another model, then download again.`, {
      file,
    });
  }
}

/**
 * Downloads (or resumes) a model. Resolves with the folder; rejects with a HubError. Every request goes
 * through one transport (`opts.http`, else one made from `opts.transport` and the environment's proxies).
 */
export function downloadModel(opts: DownloadModelOptions): Promise<DownloadResult> {
  return withTransport(opts, (http) => download({ ...opts, http }));
}

async function download(opts: DownloadModelOptions & { http: HttpTransport }): Promise<DownloadResult> {
  const problem = repoIdProblem(opts.repo);
  if (problem) throw new HubError('not_found', `"${opts.repo}": ${problem}`, { repo: opts.repo });
  const endpoint = resolveEndpoint(opts.endpoint, opts.env);
  const revision = opts.revision ?? 'main';
  const dir = path.resolve(opts.destDir ?? modelDir(opts.storageDir, opts.repo));
  const files = opts.files;
  const interval = opts.progressIntervalMs ?? 100;
  const meter = new SpeedMeter();
  let lastEmit = 0;
  let total: number | undefined;
  let doneBefore = 0; // bytes of files finished (or skipped)
  let current = 0; // bytes of the current file on disk
  let fileIndex = 0;
  let currentFile: string | undefined;

  const emit = (phase: DownloadProgress['phase'], force = false) => {
    if (!opts.onProgress) return;
    const now = Date.now();
    if (!force && now - lastEmit < interval) return;
    lastEmit = now;
    const bytes = doneBefore + current;
    const speed = meter.speed();
    const etaSeconds = total !== undefined && speed > 0 ? Math.max(0, (total - bytes) / speed) : undefined;
    opts.onProgress({ phase, file: currentFile, fileIndex, fileCount: files.length, bytes, total, speed, etaSeconds });
  };
  const cancelled = () => downloadCancelled(opts.repo);
  if (opts.signal?.aborted) throw cancelled();
  // Every path before any request: the hub would normalise `a/../x` and answer for another file.
  for (const f of files) {
    const problem = repoPathProblem(f.path) ?? portablePathProblem(f.path);
    if (problem) throw unsafePath(f.path, problem);
  }
  const clash = caseCollision(files.map((f) => f.path));
  if (clash) throw unsafePath(clash[1], `it is the same file as "${clash[0]}" on this file system, which ignores case`);

  // 1. Metadata of every file (sizes, checksums) before writing anything.
  emit('metadata', true);
  const metas: (FileMetadata | null)[] = [];
  let commit: string | undefined;
  for (const f of files) {
    currentFile = f.path;
    try {
      const m = await withRetries(opts, { cancelled }, () => fileMetadata({ endpoint, repo: opts.repo, revision, file: f.path }, opts));
      commit ??= m.commit;
      metas.push(m);
    } catch (e) {
      if (e instanceof HubError && e.kind === 'not_found' && f.optional && e.details.code !== 'RepoNotFound' && e.details.code !== 'RevisionNotFound') {
        metas.push(null);
        continue;
      }
      if (opts.signal?.aborted) throw cancelled();
      throw e;
    }
  }
  const wanted = files.map((f, i) => ({ f, meta: metas[i] })).filter((x): x is { f: ModelFile; meta: FileMetadata } => x.meta !== null);
  const known = wanted.every((x) => x.meta.size !== undefined);
  total = known ? wanted.reduce((s, x) => s + (x.meta.size ?? 0), 0) : undefined;

  // 2. Free space for what is still missing.
  let needed = 0;
  for (const { f, meta } of wanted) {
    const dest = safeJoin(dir, f.path);
    if (meta.size === undefined) continue;
    if (fileSize(dest) === meta.size) continue;
    needed += Math.max(0, meta.size - (fileSize(`${dest}.part`) ?? 0));
  }
  const free = await freeBytes(dir, opts.statfs);
  const reserve = opts.reserveBytes ?? DEFAULT_RESERVE;
  if (free !== undefined && needed + reserve > free) {
    throw new HubError(
      'disk',
      `Not enough disk space for ${opts.repo}: it needs ${formatBytes(needed)} (+${formatBytes(reserve)} spare) in ${dir}, ${formatBytes(free)} are free.`,
      { repo: opts.repo },
    );
  }

  // 3. The files, one after the other.
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, INCOMPLETE_MARKER), JSON.stringify({ repo: opts.repo, revision, startedAt: new Date().toISOString() }));
  const out: DownloadedFile[] = [];
  meter.reset(0);
  for (const { f, meta } of wanted) {
    fileIndex = out.length;
    currentFile = f.path;
    const dest = safeJoin(dir, f.path);
    mkdirsInside(dir, f.path);
    const existing = ensureKind(dest, 'file', f.path)?.size;
    if (existing !== undefined && (meta.size === undefined || existing === meta.size)) {
      // The right size is not the right file: with a sha256 to compare, the manifest records only what is there.
      let same = true;
      if (meta.sha256) {
        emit('verify', true);
        const sum = await sha256File(dest, opts.signal).catch((e) => {
          throw opts.signal?.aborted ? cancelled() : e;
        });
        same = sum === meta.sha256;
        if (!same) opts.log?.(`${f.path}: the file already present does not match its SHA-256 (${sum}, expected ${meta.sha256}); downloading it again.`);
      }
      if (same) {
        out.push({ path: f.path, size: existing, sha256: meta.sha256, skipped: true });
        doneBefore += existing;
        meter.reset(doneBefore);
        emit('download', true);
        continue;
      }
    }
    if (existing !== undefined) await removeOldVersion(dest, f.path); // a different version: replace it
    current = 0;
    const res = await fetchFile({
      url: resolveUrl(endpoint, opts.repo, revision, f.path),
      endpoint,
      repo: opts.repo,
      revision,
      file: f.path,
      dest,
      meta,
      opts,
      onFileBytes: (n, jump) => {
        current = n;
        if (jump) meter.reset(doneBefore + current);
        else meter.add(doneBefore + current);
        emit('download');
      },
      onVerify: () => emit('verify', true),
    });
    current = 0;
    doneBefore += res.size;
    out.push({ path: f.path, size: res.size, sha256: res.sha256 });
    emit('download', true);
  }

  const manifest: ModelManifest = {
    repo: opts.repo,
    revision,
    commit,
    endpoint,
    downloadedAt: new Date().toISOString(),
    files: out.map(({ path: p, size, sha256 }) => ({ path: p, size, sha256 })),
  };
  fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify(manifest, null, 2));
  fs.rmSync(path.join(dir, INCOMPLETE_MARKER), { force: true });
  fileIndex = files.length;
  currentFile = undefined;
  emit('done', true);
  return { repo: opts.repo, revision, commit, dir, files: out, bytes: doneBefore };
}
