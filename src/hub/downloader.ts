import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import {
  fileMetadata,
  header,
  hubRequest,
  HubError,
  isHubError,
  isTransient,
  networkError,
  parseContentRange,
  parseSize,
  repoIdProblem,
  repoPathProblem,
  resolveEndpoint,
  resolveUrl,
  statusError,
  type FileMetadata,
  type HubOptions,
} from './hubClient';
import { modelFolderName, type ModelFile } from './recommended';

/**
 * Downloads a model's files from the hub into `<storageDir>/models/<owner>--<name>/`:
 * every repo path checked first (no request for a path that could leave the folder), HEAD for size and
 * sha256, a free-space check, then each file into `<file>.part` (never through a symlink), resumed with a
 * Range request after a dropped connection (a few retries with backoff), checked (size, and sha256 for
 * LFS files) and renamed when whole. While files are missing the folder holds an `.incomplete` marker;
 * at the end a `ghostline-model.json` manifest records the repo, revision, commit and checksums.
 */

export const INCOMPLETE_MARKER = '.incomplete';
export const MANIFEST = 'ghostline-model.json';
const DEFAULT_RESERVE = 32 * 1024 * 1024;

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

export interface StatFsLike {
  bavail: number | bigint;
  bsize: number | bigint;
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

function unsafePath(file: string, problem: string): HubError {
  return new HubError('not_found', `Refusing the file path ${JSON.stringify(file)}: ${problem}.`, { file, code: 'UnsafePath' });
}

/** `dir/file` for a path repoPathProblem accepted; the resolved check is a second guard. */
function safeJoin(dir: string, file: string): string {
  const p = path.resolve(dir, file);
  if (!p.startsWith(dir + path.sep)) throw unsafePath(file, 'it resolves outside the model folder or to the folder itself');
  return p;
}

/** Size of the regular file at `p`; undefined for nothing, or a symlink (not followed) or other non-file. */
function fileSize(p: string): number | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What is at `p` when it is a `want` (undefined when nothing is). A symlink or special file there is removed,
 * never followed: a hostile workspace or an earlier process could point it at ~/.bashrc. A file where a
 * folder belongs (or the reverse) is refused rather than deleted.
 */
function ensureKind(p: string, want: 'file' | 'folder', file: string): fs.Stats | undefined {
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
function mkdirsInside(dir: string, file: string): void {
  let d = dir;
  for (const seg of file.split('/').slice(0, -1)) {
    d = path.join(d, seg);
    if (!ensureKind(d, 'folder', file)) fs.mkdirSync(d);
  }
}

/** Opens `part` for writing without following a symlink (O_NOFOLLOW where the platform has it). */
function openPart(part: string, append: boolean, file: string): number {
  const k = fs.constants;
  try {
    return fs.openSync(part, k.O_WRONLY | k.O_CREAT | (append ? k.O_APPEND : k.O_TRUNC) | (k.O_NOFOLLOW ?? 0), 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new HubError('disk', `${file}: ${part} is a symlink; refusing to write through it.`, { file });
    throw e;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new HubError('cancelled', 'Download cancelled'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new HubError('cancelled', 'Download cancelled'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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

interface BodyLimits {
  /** Most bytes this body may have; one more stops it with `tooLong()`. */
  max: number;
  tooLong: () => HubError;
  /** Async check every `every` bytes (free space); an error it returns stops the body. */
  space?: { every: number; check: () => Promise<HubError | undefined> };
}

/**
 * Streams a response body into the open `fd` and resolves with the byte count. Unlike `pipeline`, a body
 * that breaks off (or a cancel) still flushes every byte received to disk before the promise rejects, so a
 * resume starts exactly where the data stopped.
 */
function writeBody(res: IncomingMessage, fd: number, part: string, limits: BodyLimits, onBytes: (n: number) => void, signal?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = fs.createWriteStream(part, { fd });
    let got = 0;
    let failure: unknown;
    let ended = false;
    const finish = (err?: unknown) => {
      if (ended) return;
      ended = true;
      failure ??= err;
      signal?.removeEventListener('abort', onAbort);
      res.removeListener('data', onData);
      ws.end();
    };
    const fail = (e: unknown) => {
      finish(e);
      res.destroy();
    };
    const onData = (chunk: Buffer) => {
      const before = got;
      got += chunk.length;
      if (got > limits.max) return fail(limits.tooLong()); // never write past what the file may have
      // Backpressure only when far behind: a paused body that breaks off loses what it had buffered.
      if (!ws.write(chunk) && ws.writableLength > 64 << 20 && !res.isPaused()) {
        res.pause();
        ws.once('drain', () => res.resume());
      }
      onBytes(got);
      const s = limits.space;
      if (s && Math.floor(got / s.every) > Math.floor(before / s.every)) {
        s.check().then((e) => e && fail(e), () => undefined);
      }
    };
    const onAbort = () => fail(new HubError('cancelled', 'Download cancelled'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    res.on('data', onData);
    res.once('end', () => finish(res.complete ? undefined : prematureClose(got)));
    res.once('error', (e) => finish(e));
    res.once('close', () => finish(res.complete ? undefined : prematureClose(got)));
    ws.once('error', (e) => {
      failure ??= e;
      res.destroy();
      reject(failure);
    });
    ws.once('finish', () => (failure ? reject(failure) : resolve(got)));
  });
}

function prematureClose(got: number): NodeJS.ErrnoException {
  const e = new Error(`connection closed after ${got} bytes of the body`) as NodeJS.ErrnoException;
  e.code = 'ECONNRESET';
  return e;
}

/** Sliding-window speed meter. */
class SpeedMeter {
  private samples: { t: number; bytes: number }[] = [];
  constructor(private readonly windowMs = 5000) {}
  add(bytesTotal: number, now = Date.now()): void {
    const last = this.samples[this.samples.length - 1];
    if (last && now - last.t < 50) {
      last.bytes = Math.max(last.bytes, bytesTotal);
      if (this.samples.length > 1) return;
    }
    this.samples.push({ t: now, bytes: bytesTotal });
    while (this.samples.length > 2 && now - this.samples[0].t > this.windowMs) this.samples.shift();
  }
  /** Resets after a jump in bytes that is not transfer (a truncated part, a skipped file). */
  reset(bytesTotal: number): void {
    this.samples = [{ t: Date.now(), bytes: bytesTotal }];
  }
  speed(): number {
    if (this.samples.length < 2) return 0;
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    const dt = (b.t - a.t) / 1000;
    return dt > 0 ? Math.max(0, (b.bytes - a.bytes) / dt) : 0;
  }
}

interface FetchContext {
  url: string;
  endpoint: string;
  repo: string;
  revision: string;
  file: string;
  dest: string;
  meta: FileMetadata;
  opts: DownloadModelOptions;
  /** Called with the number of bytes of this file on disk so far. */
  onFileBytes: (n: number, jump?: boolean) => void;
  /** Called before the sha256 pass over the whole file. */
  onVerify: () => void;
}

/**
 * One file into `<dest>.part`, resuming it with Range after an interruption; verified and renamed to `dest`.
 * A checksum mismatch removes the part and throws 'checksum'; a cancel keeps the part for a later resume.
 */
async function fetchFile(c: FetchContext): Promise<{ size: number; sha256?: string }> {
  const { opts, meta } = c;
  const part = `${c.dest}.part`;
  const retries = opts.retries ?? 4;
  const baseDelay = opts.retryDelayMs ?? 500;
  let failures = 0;
  for (;;) {
    let start = ensureKind(part, 'file', c.file)?.size ?? 0;
    if (meta.size !== undefined && start > meta.size) {
      fs.rmSync(part, { force: true });
      start = 0;
    }
    c.onFileBytes(start, true);
    if (meta.size !== undefined && start === meta.size && start > 0) break; // whole already: verify below
    let wrote = 0;
    try {
      const headers: Record<string, string> = {};
      if (start > 0) headers.range = `bytes=${start}-`;
      const r = await hubRequest(c.url, {
        headers,
        token: opts.token,
        tokenOrigin: new URL(c.endpoint).origin,
        signal: opts.signal,
        timeoutMs: opts.timeoutMs,
        userAgent: opts.userAgent,
      });
      if (r.status === 416 && start > 0) {
        // The part is at least as long as the file: start again from zero.
        r.body.resume();
        fs.rmSync(part, { force: true });
        continue;
      }
      if (r.status >= 400) {
        r.body.resume();
        throw statusError(r.status, {
          url: r.url,
          repo: c.repo,
          file: c.file,
          revision: c.revision,
          endpoint: c.endpoint,
          tokenSent: r.tokenSent,
          errorCode: header(r.firstHeaders, 'x-error-code') ?? header(r.headers, 'x-error-code'),
        });
      }
      let append = false;
      let range: ReturnType<typeof parseContentRange>;
      if (r.status === 206) {
        range = parseContentRange(header(r.headers, 'content-range'));
        if (!range || range.start !== start) {
          // A range we did not ask for: drop the part and fetch the whole file.
          r.body.resume();
          fs.rmSync(part, { force: true });
          failures++;
          if (failures > retries) throw new HubError('http', `${c.file}: the server answered a wrong range (${header(r.headers, 'content-range')})`, { url: r.url, file: c.file });
          continue;
        }
        append = true;
      } else if (r.status !== 200) {
        r.body.resume();
        throw new HubError('http', `${c.file}: unexpected HTTP ${r.status} from ${new URL(r.url).host}`, { status: r.status, url: r.url, file: c.file });
      }
      const base = append ? start : 0;
      const expectBody = parseSize(header(r.headers, 'content-length'));
      // The size the file must not pass: the hub's, else this response's, else the cap for unsized files.
      const declared = meta.size ?? range?.total ?? (expectBody !== undefined ? base + expectBody : undefined);
      const max = declared ?? opts.maxUnsizedBytes ?? 64 * 1024 ** 3;
      const every = opts.spaceCheckBytes ?? 64 * 1024 * 1024;
      const reserve = opts.reserveBytes ?? DEFAULT_RESERVE;
      const details = { file: c.file, repo: c.repo, url: r.url, code: 'BodyTooLong' };
      const limits: BodyLimits = {
        max: max - base,
        tooLong: () =>
          declared !== undefined
            ? new HubError('checksum', `${c.file}: the server sent more than the ${declared} bytes it announced; the download was stopped and removed. Try again.`, details)
            : new HubError('disk', `${c.file}: the server gives no size and sent more than ${fmt(max)}, the limit for such a file; the download was stopped and removed.`, details),
        // No size from the hub, so no free-space check up front: check as it grows, and stop while the
        // reserve still holds the next stretch. The part is kept for a resume.
        space:
          meta.size === undefined
            ? {
                every,
                check: async () => {
                  const free = await freeBytes(path.dirname(c.dest), opts.statfs);
                  if (free === undefined || free - reserve >= every) return undefined;
                  return new HubError(
                    'disk',
                    `${c.file}: the disk is running out of space (${fmt(free)} free, ${fmt(reserve)} kept spare) while downloading a file of unknown size. Free some space and run the download again to resume.`,
                    { file: c.file, repo: c.repo, code: 'DiskLow' },
                  );
                },
              }
            : undefined,
      };
      c.onFileBytes(base, !append);
      let fd: number;
      try {
        fd = openPart(part, append, c.file);
      } catch (e) {
        r.body.destroy();
        throw e;
      }
      const got = await writeBody(r.body, fd, part, limits, (n) => ((wrote = n), c.onFileBytes(base + n)), opts.signal);
      if (expectBody !== undefined && got < expectBody) {
        const e = new Error(`connection closed after ${got} of ${expectBody} bytes`) as NodeJS.ErrnoException;
        e.code = 'GHOSTLINE_SHORT_BODY';
        throw e;
      }
      break;
    } catch (e) {
      if (isHubError(e) && e.details.code === 'BodyTooLong') fs.rmSync(part, { force: true }); // not the file: no resume
      if (opts.signal?.aborted) throw new HubError('cancelled', `Download of ${c.repo} cancelled; it resumes where it stopped next time.`, { repo: c.repo, file: c.file });
      const err = networkError(e, c.url, opts.signal);
      // A connection that drops after making progress does not use up the retries.
      if (wrote > 0) failures = 0;
      if (err.kind === 'http' && isTransient(err) && failures < retries) {
        failures++;
        await sleep(baseDelay * 2 ** (failures - 1), opts.signal).catch(() => {
          throw new HubError('cancelled', `Download of ${c.repo} cancelled; it resumes where it stopped next time.`, { repo: c.repo, file: c.file });
        });
        continue;
      }
      if (err.kind === 'http' && isTransient(err)) {
        throw new HubError('http', `${c.file}: the connection kept dropping (${failures + 1} attempts): ${err.message}. Run the download again to resume.`, err.details);
      }
      throw err;
    }
  }
  // Whole: check the size, then the sha256 of LFS files.
  const size = fileSize(part) ?? 0;
  if (meta.size !== undefined && size !== meta.size) {
    fs.rmSync(part, { force: true });
    throw new HubError('checksum', `${c.file}: received ${size} bytes, the hub announced ${meta.size}. The file was removed; try again.`, { file: c.file, repo: c.repo });
  }
  let sha256: string | undefined;
  if (meta.sha256) {
    c.onVerify();
    sha256 = await sha256File(part, opts.signal).catch((e) => {
      if (opts.signal?.aborted) throw new HubError('cancelled', `Download of ${c.repo} cancelled`, { repo: c.repo, file: c.file });
      throw e;
    });
    if (sha256 !== meta.sha256) {
      fs.rmSync(part, { force: true });
      throw new HubError(
        'checksum',
        `${c.file}: SHA-256 mismatch (expected ${meta.sha256}, got ${sha256}). The corrupted file was removed; try again, or check the mirror/proxy.`,
        { file: c.file, repo: c.repo },
      );
    }
  }
  fs.renameSync(part, c.dest);
  return { size, sha256 };
}

/** Downloads (or resumes) a model. Resolves with the folder; rejects with a HubError. */
export async function downloadModel(opts: DownloadModelOptions): Promise<DownloadResult> {
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
  const cancelled = () => new HubError('cancelled', `Download of ${opts.repo} cancelled; it resumes where it stopped next time.`, { repo: opts.repo });
  if (opts.signal?.aborted) throw cancelled();
  // Every path before any request: the hub would normalise `a/../x` and answer for another file.
  for (const f of files) {
    const problem = repoPathProblem(f.path);
    if (problem) throw unsafePath(f.path, problem);
  }

  // 1. Metadata of every file (sizes, checksums) before writing anything.
  emit('metadata', true);
  const metas: (FileMetadata | null)[] = [];
  let commit: string | undefined;
  for (const f of files) {
    currentFile = f.path;
    try {
      const m = await withRetries(() => fileMetadata({ endpoint, repo: opts.repo, revision, file: f.path }, opts), opts);
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
      `Not enough disk space for ${opts.repo}: it needs ${fmt(needed)} (+${fmt(reserve)} spare) in ${dir}, ${fmt(free)} are free.`,
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
    if (existing !== undefined) fs.rmSync(dest, { force: true }); // a different version: replace it
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

/** Retries a request that failed with a transient error (dropped connection, 5xx, 429). */
async function withRetries<T>(fn: () => Promise<T>, opts: DownloadModelOptions): Promise<T> {
  const retries = opts.retries ?? 4;
  const base = opts.retryDelayMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (opts.signal?.aborted || attempt >= retries || !isTransient(e)) throw e;
      await sleep(base * 2 ** attempt, opts.signal);
    }
  }
}

function fmt(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}
