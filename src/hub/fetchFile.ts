import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HttpTransport } from '../net/httpTransport';
import type { DownloadModelOptions } from './downloader';
import { formatBytes } from './format';
import { header, hubRequest } from './hubRequest';
import { HubError, isHubError, networkError, statusError } from './hubErrors';
import { parseContentRange, parseSize } from './responseHeaders';
import type { FileMetadata } from './hubClient';
import { DEFAULT_RESERVE, ensureKind, fileSize, freeBytes, openPart, sha256File } from './localFiles';
import { downloadCancelled, RetryNow, withRetries } from './retry';
import { writeBody, type BodyLimits } from './writeBody';
import { renameWhenFree } from '../platform/folderSwap';

/**
 * One file of a download: fetched into `<dest>.part`, resumed with a Range request after a dropped connection
 * (withRetries), then checked (size, and SHA-256 for LFS files) and renamed to `dest` when whole.
 */

export interface FetchContext {
  url: string;
  endpoint: string;
  repo: string;
  revision: string;
  file: string;
  dest: string;
  meta: FileMetadata;
  /** The download's options, with the transport every request of it goes through. */
  opts: DownloadModelOptions & { http: HttpTransport };
  /** Called with the number of bytes of this file on disk so far. */
  onFileBytes: (n: number, jump?: boolean) => void;
  /** Called before the sha256 pass over the whole file. */
  onVerify: () => void;
}

/**
 * One file into `<dest>.part`, resuming it with Range after an interruption; verified and renamed to `dest`.
 * A checksum mismatch removes the part and throws 'checksum'; a cancel keeps the part for a later resume.
 */
export async function fetchFile(c: FetchContext): Promise<{ size: number; sha256?: string }> {
  const part = `${c.dest}.part`;
  const cancelled = () => downloadCancelled(c.repo, c.file);
  await withRetries(
    c.opts,
    {
      cancelled,
      exhausted: (e, attempts) => {
        const err = networkError(e, c.url, c.opts.signal, c.opts.http.proxies);
        return new HubError(
          'http',
          `${c.file}: the connection kept dropping (${attempts} attempts): ${err.message}. Run the download again to resume.`,
          err.details,
        );
      },
    },
    (progress) => fetchRest(c, part, progress),
  );
  return verifyAndRename(c, part);
}

/**
 * One request for what the part still lacks (all of it when there is none), appended to the part; returns at
 * once when the part is already whole. Errors come back as HubErrors, a cancel as `downloadCancelled`.
 */
async function fetchRest(c: FetchContext, part: string, progress: () => void): Promise<void> {
  const { meta } = c;
  let start = ensureKind(part, 'file', c.file)?.size ?? 0;
  if (meta.size !== undefined && start > meta.size) {
    fs.rmSync(part, { force: true });
    start = 0;
  }
  c.onFileBytes(start, true);
  if (meta.size !== undefined && start === meta.size && start > 0) return; // whole already: verified after
  try {
    await requestInto(c, part, start, progress);
  } catch (e) {
    if (e instanceof RetryNow) throw e;
    if (isHubError(e) && e.details.code === 'BodyTooLong') fs.rmSync(part, { force: true }); // not the file: no resume
    if (c.opts.signal?.aborted) throw downloadCancelled(c.repo, c.file);
    throw networkError(e, c.url, c.opts.signal, c.opts.http.proxies);
  }
}

async function requestInto(c: FetchContext, part: string, start: number, progress: () => void): Promise<void> {
  const { opts, meta } = c;
  const headers: Record<string, string> = {};
  if (start > 0) headers.range = `bytes=${start}-`;
  const r = await hubRequest(c.url, {
    http: opts.http,
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
    throw new RetryNow();
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
      throw new RetryNow(
        new HubError('http', `${c.file}: the server answered a wrong range (${header(r.headers, 'content-range')})`, { url: r.url, file: c.file }),
      );
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
  const limits = bodyLimits(c, r.url, base, declared);
  c.onFileBytes(base, !append);
  let fd: number;
  try {
    fd = openPart(part, append, c.file);
  } catch (e) {
    r.body.destroy();
    throw e;
  }
  const got = await writeBody(
    r.body,
    fd,
    part,
    limits,
    (n) => {
      if (n > 0) progress();
      c.onFileBytes(base + n);
    },
    opts.signal,
  );
  if (expectBody !== undefined && got < expectBody) {
    const e = new Error(`connection closed after ${got} of ${expectBody} bytes`) as NodeJS.ErrnoException;
    e.code = 'GHOSTLINE_SHORT_BODY';
    throw e;
  }
}

/** How far the body may go: to the declared size (else the cap for unsized files), watching free space when the hub gave no size. */
function bodyLimits(c: FetchContext, url: string, base: number, declared: number | undefined): BodyLimits {
  const { opts, meta } = c;
  const max = declared ?? opts.maxUnsizedBytes ?? 64 * 1024 ** 3;
  const every = opts.spaceCheckBytes ?? 64 * 1024 * 1024;
  const reserve = opts.reserveBytes ?? DEFAULT_RESERVE;
  const details = { file: c.file, repo: c.repo, url, code: 'BodyTooLong' };
  return {
    max: max - base,
    tooLong: () =>
      declared !== undefined
        ? new HubError(
            'checksum',
            `${c.file}: the server sent more than the ${declared} bytes it announced; the download was stopped and removed. Try again.`,
            details,
          )
        : new HubError(
            'disk',
            `${c.file}: the server gives no size and sent more than ${formatBytes(max)}, the limit for such a file; the download was stopped and removed.`,
            details,
          ),
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
                `${c.file}: the disk is running out of space (${formatBytes(free)} free, ${formatBytes(reserve)} kept spare) while downloading a file of unknown size. Free some space and run the download again to resume.`,
                { file: c.file, repo: c.repo, code: 'DiskLow' },
              );
            },
          }
        : undefined,
  };
}

/** The whole part: its size, then the sha256 of an LFS file, checked; renamed to `dest`. A mismatch removes it. */
async function verifyAndRename(c: FetchContext, part: string): Promise<{ size: number; sha256?: string }> {
  const { opts, meta } = c;
  const size = fileSize(part) ?? 0;
  if (meta.size !== undefined && size !== meta.size) {
    fs.rmSync(part, { force: true });
    throw new HubError('checksum', `${c.file}: received ${size} bytes, the hub announced ${meta.size}. The file was removed; try again.`, {
      file: c.file,
      repo: c.repo,
    });
  }
  let sha256: string | undefined;
  if (meta.sha256) {
    c.onVerify();
    sha256 = await sha256File(part, opts.signal).catch((e) => {
      throw opts.signal?.aborted ? downloadCancelled(c.repo, c.file) : e;
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
  // Just hashed and closed: an antivirus may be scanning it now, which on Windows refuses the rename for a moment.
  await renameWhenFree(part, c.dest, `move the finished download to ${c.dest}`, {
    hint: 'An antivirus or another program is holding the file; try again in a moment.',
  });
  return { size, sha256 };
}
