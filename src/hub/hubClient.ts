import * as http from 'node:http';
import * as https from 'node:https';

/**
 * Minimal Hugging Face hub client on node's http/https: URL scheme, endpoint resolution, redirects (the
 * Authorization header is dropped when a redirect leaves the endpoint's origin, as huggingface_hub does),
 * file metadata from the first response (X-Linked-Size / X-Linked-Etag) and error classification.
 * No `vscode` import.
 */

const DEFAULT_ENDPOINT = 'https://huggingface.co';

export type HubErrorKind = 'offline' | 'unauthorized' | 'forbidden' | 'not_found' | 'checksum' | 'disk' | 'cancelled' | 'http';

export class HubError extends Error {
  override readonly name = 'HubError';
  constructor(
    readonly kind: HubErrorKind,
    message: string,
    readonly details: { status?: number; url?: string; file?: string; repo?: string; code?: string } = {},
  ) {
    super(message);
  }
}

export function isHubError(e: unknown, kind?: HubErrorKind): e is HubError {
  return e instanceof HubError && (kind === undefined || e.kind === kind);
}

export interface HubOptions {
  /** Explicit endpoint (a setting); otherwise HF_ENDPOINT, otherwise https://huggingface.co. */
  endpoint?: string;
  /** Bearer token for gated or private repos. Sent to the endpoint's origin only. */
  token?: string;
  /** Socket idle timeout in ms (default 30 s). */
  timeoutMs?: number;
  userAgent?: string;
  /** Environment to read HF_ENDPOINT from (tests). */
  env?: NodeJS.ProcessEnv;
}

/** The endpoint without a trailing slash: explicit option, then HF_ENDPOINT, then the default. */
export function resolveEndpoint(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const raw = explicit?.trim() || env.HF_ENDPOINT?.trim() || DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HubError('http', `Invalid Hugging Face endpoint "${raw}": expected a URL such as ${DEFAULT_ENDPOINT}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new HubError('http', `Invalid Hugging Face endpoint "${raw}": only http and https are supported`);
  }
  return raw.replace(/\/+$/, '');
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Why `id` is not a Hugging Face repo id (`owner/name`), or undefined when it is one. */
export function repoIdProblem(id: string): string | undefined {
  const s = id.trim();
  if (!s) return 'Enter a repo id such as onnx-community/Qwen2.5-Coder-0.5B-Instruct';
  const parts = s.split('/');
  if (parts.length !== 2) return 'A repo id has the form owner/name (exactly one "/")';
  for (const p of parts) {
    if (!SEGMENT.test(p)) return `"${p}": letters, digits, ".", "_" and "-" only, not starting with a symbol`;
    if (p.length > 96) return `"${p}" is too long`;
    if (p.includes('..') || p.includes('--')) return `"${p}": ".." and "--" are not allowed`;
    if (p.endsWith('.') || p.endsWith('.git')) return `"${p}" cannot end with "." or ".git"`;
  }
  return undefined;
}

/**
 * Why `p` is not a plain relative file path inside a repo, or undefined when it is. Checked before any request
 * (the hub normalises `a/../x` itself) and before joining it to a local folder: no absolute path or drive letter,
 * no backslash or control character, and no empty, "." or ".." segment, so it can never leave the folder or
 * name the folder itself. Dot-and-space-only segments ("...", ". ") are refused too: Windows strips trailing
 * dots and spaces, which would turn them into "." or "..".
 */
export function repoPathProblem(p: string): string | undefined {
  if (typeof p !== 'string') return 'it is not a string';
  if (p.length === 0) return 'it is empty';
  if (p.includes('\\')) return 'it contains a backslash';
  if (p.includes('\0')) return 'it contains a NUL byte';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this check's purpose
  if (/[\x01-\x1f\x7f-\x9f]/.test(p)) return 'it contains a control character';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'it is an absolute path';
  const segs = p.split('/');
  const dotty = segs.filter((s) => /^[.\s]*$/.test(s)); // "", ".", "..", "...", ". "
  if (dotty.some((s) => s.includes('..'))) return 'it has a ".." segment, which leaves the repo folder (or comes back to it)';
  if (dotty.length === segs.length) return 'it names the repo folder itself, not a file';
  if (dotty.length > 0) return 'it has an empty or "." segment';
  return undefined;
}

/** A byte count from a header (Content-Length, X-Linked-Size): plain decimal digits only, else undefined. */
export function parseSize(v: string | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (!/^\d{1,16}$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** `Content-Range: bytes start-end/total` (total may be `*`), consistent, else undefined. */
export function parseContentRange(v: string | undefined): { start: number; end: number; total?: number } | undefined {
  const m = typeof v === 'string' ? /^bytes (\d{1,16})-(\d{1,16})\/(\d{1,16}|\*)$/.exec(v.trim()) : null;
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? undefined : Number(m[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return undefined;
  if (total !== undefined && (!Number.isSafeInteger(total) || end >= total)) return undefined;
  return { start, end, total };
}

export function isValidRepoId(id: string): boolean {
  return repoIdProblem(id) === undefined;
}

/** `owner/name` or `owner/name@revision` (a branch, tag or commit). */
export function parseRepoRef(input: string): { repo: string; revision: string } {
  const s = input
    .trim()
    .replace(/^https?:\/\/[^/]+\//, '')
    .replace(/\/(tree|blob)\/([^/]+).*$/, '@$2');
  const at = s.indexOf('@');
  const repo = at < 0 ? s : s.slice(0, at);
  const revision = at < 0 ? 'main' : s.slice(at + 1);
  const problem = repoIdProblem(repo);
  if (problem) throw new HubError('not_found', `"${input}": ${problem}`);
  if (!revision || /[\s]/.test(revision) || revision.includes('..')) throw new HubError('not_found', `"${input}": invalid revision "${revision}"`);
  return { repo, revision };
}

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

/** `{endpoint}/{repo}/resolve/{revision}/{file}` */
export function resolveUrl(endpoint: string, repo: string, revision: string, file: string): string {
  return `${endpoint.replace(/\/+$/, '')}/${encodePath(repo)}/resolve/${encodeURIComponent(revision)}/${encodePath(file)}`;
}

const OFFLINE_CODES = new Set(['ENOTFOUND', 'ECONNREFUSED', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN', 'EHOSTDOWN']);
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'HPE_INVALID_CONSTANT',
  'GHOSTLINE_SHORT_BODY',
]);

/** A network error worth retrying (a connection dropped mid-transfer, a timeout, a 5xx or 429). */
export function isTransient(e: unknown): boolean {
  if (e instanceof HubError) {
    const s = e.details.status;
    return e.kind === 'http' && (s === undefined ? TRANSIENT_CODES.has(e.details.code ?? '') : s === 429 || s >= 500);
  }
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code && TRANSIENT_CODES.has(code)) return true;
  const msg = (e as Error)?.message ?? '';
  return /aborted|socket hang up|premature close/i.test(msg);
}

/** Turns a socket error into a HubError with a message a user can act on. */
export function networkError(e: unknown, url: string, signal?: AbortSignal): HubError {
  if (e instanceof HubError) return e;
  if (signal?.aborted) return new HubError('cancelled', 'Download cancelled', { url });
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  const host = safeHost(url);
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new HubError('disk', `The disk is full (${code}) while writing the download: free some space and run it again to resume.`, { url, code });
  }
  if (OFFLINE_CODES.has(code)) {
    return new HubError('offline', `Cannot reach ${host} (${code}): you seem to be offline, or the endpoint is wrong or blocked by a proxy.`, { url, code });
  }
  return new HubError('http', `Connection to ${host} failed: ${err?.message ?? String(e)}${code ? ` (${code})` : ''}`, {
    url,
    code: code || (isTransient(e) ? 'ECONNRESET' : undefined),
  });
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Maps a hub status code (and its X-Error-Code header) to a HubError. */
export function statusError(
  status: number,
  ctx: { url: string; repo?: string; file?: string; revision?: string; endpoint?: string; tokenSent: boolean; errorCode?: string; errorMessage?: string },
): HubError {
  const what = ctx.file ? `${ctx.repo ?? ''}${ctx.repo ? ': ' : ''}${ctx.file}` : (ctx.repo ?? ctx.url);
  const page = ctx.repo ? `${(ctx.endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/${ctx.repo}` : ctx.url;
  const d = { status, url: ctx.url, file: ctx.file, repo: ctx.repo, code: ctx.errorCode };
  // The hub answers 401 for a repo that does not exist (so as not to reveal private ones): trust its error code.
  if (ctx.errorCode === 'RepoNotFound') {
    return new HubError(
      'not_found',
      `Repository ${ctx.repo ?? ''} not found on ${safeHost(ctx.url)} (HTTP ${status}). Check the id${ctx.tokenSent ? '' : '; a private repo needs a token'}.`,
      d,
    );
  }
  if (ctx.errorCode === 'RevisionNotFound') return new HubError('not_found', `Revision "${ctx.revision}" of ${ctx.repo} not found (HTTP ${status}).`, d);
  if (ctx.errorCode === 'EntryNotFound')
    return new HubError('not_found', `File ${ctx.file} not found in ${ctx.repo} at revision ${ctx.revision} (HTTP ${status}).`, d);
  if (status === 401) {
    return new HubError(
      'unauthorized',
      ctx.tokenSent
        ? `${what}: the hub refused the token (HTTP 401). Check that it is valid and has read access.`
        : `${what}: the hub answered 401. The model is gated or private: it needs a Hugging Face token (HF_TOKEN or "Ghostline: Set Hugging Face Token"), and you must accept its licence on ${page}.`,
      d,
    );
  }
  if (status === 403) {
    return new HubError(
      'forbidden',
      `${what}: access refused (HTTP 403). Accept the licence or request access on ${page}, and use a token with read permission.`,
      d,
    );
  }
  if (status === 404) return new HubError('not_found', `${what}: not found (HTTP 404). Check the repo id, revision and file name.`, d);
  const extra = ctx.errorMessage ? `: ${ctx.errorMessage}` : '';
  return new HubError('http', `${what}: the server answered HTTP ${status}${extra}.`, d);
}

export interface HubResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The URL that gave this response (after redirects). */
  url: string;
  /** Headers of the first response (before redirects): the hub's metadata. */
  firstHeaders: http.IncomingHttpHeaders;
  firstStatus: number;
  body: http.IncomingMessage;
  tokenSent: boolean;
}

export interface RequestOptions {
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  token?: string;
  /** Origin the token may be sent to (the endpoint). Default: the origin of the first URL. */
  tokenOrigin?: string;
  signal?: AbortSignal;
  followRedirects?: boolean;
  maxRedirects?: number;
  timeoutMs?: number;
  userAgent?: string;
}

function requestOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new HubError('cancelled', 'Download cancelled', { url: url.href }));
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method, headers, signal, agent: false });
    req.setTimeout(timeoutMs, () => {
      const e = new Error(`no data from ${url.host} for ${Math.round(timeoutMs / 1000)} s`) as NodeJS.ErrnoException;
      e.code = 'ETIMEDOUT';
      req.destroy(e);
    });
    req.once('response', (res) => {
      // From here the body owns the socket: an idle body is handled by the reader's own timeout.
      req.setTimeout(0);
      res.socket?.setTimeout(timeoutMs, () => {
        const e = new Error(`transfer from ${url.host} stalled for ${Math.round(timeoutMs / 1000)} s`) as NodeJS.ErrnoException;
        e.code = 'ETIMEDOUT';
        res.destroy(e);
      });
      resolve(res);
    });
    req.once('error', (e) => reject(networkError(e, url.href, signal)));
    req.end();
  });
}

/** One request, following redirects (relative or to another host/port) when asked. */
export async function hubRequest(url: string, opts: RequestOptions = {}): Promise<HubResponse> {
  const method = opts.method ?? 'GET';
  const follow = opts.followRedirects ?? true;
  const max = opts.maxRedirects ?? 10;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let current = new URL(url);
  const tokenOrigin = opts.tokenOrigin ?? current.origin;
  let first: { status: number; headers: http.IncomingHttpHeaders } | undefined;
  let tokenSent = false;
  for (let hop = 0; ; hop++) {
    const headers: Record<string, string> = {
      'user-agent': opts.userAgent ?? 'ghostline-vscode (node)',
      'accept-encoding': 'identity',
      ...opts.headers,
    };
    if (opts.token && current.origin === tokenOrigin) {
      headers.authorization = `Bearer ${opts.token}`;
      if (hop === 0) tokenSent = true;
    }
    const res = await requestOnce(current, method, headers, opts.signal, timeoutMs);
    const status = res.statusCode ?? 0;
    if (!first) first = { status, headers: res.headers };
    const location = res.headers.location;
    if (follow && status >= 300 && status < 400 && location) {
      res.resume();
      if (hop >= max) throw new HubError('http', `Too many redirects from ${url}`, { url, status });
      current = new URL(location, current);
      continue;
    }
    return { status, headers: res.headers, url: current.href, firstHeaders: first.headers, firstStatus: first.status, body: res, tokenSent };
  }
}

/** Reads a small body (an error or API answer) as text, at most `limit` bytes. */
async function readText(res: http.IncomingMessage, limit = 4 << 20): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > limit) {
      res.destroy();
      break;
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function header(h: http.IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The sha256 an ETag carries, when it is one (LFS files); undefined for a git sha1 (small files) or anything else. */
export function sha256FromEtag(etag: string | undefined): string | undefined {
  if (!etag) return undefined;
  const v = etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(v) ? v : undefined;
}

export interface FileMetadata {
  /** Bytes of the file (X-Linked-Size, else Content-Length of the final response). */
  size?: number;
  /** Expected sha256 (LFS files); undefined when the hub gives only a git sha1. */
  sha256?: string;
  etag?: string;
  /** The commit the revision resolved to (X-Repo-Commit). */
  commit?: string;
}

export interface FileRef {
  endpoint: string;
  repo: string;
  revision: string;
  file: string;
}

/**
 * HEAD of a file: the hub's first response carries X-Linked-Size and X-Linked-Etag for LFS files (then a 302
 * to the CDN), or Content-Length and a git-sha1 ETag for small files. A mirror that redirects without the
 * linked headers is followed to read the size.
 */
export async function fileMetadata(ref: FileRef, opts: HubOptions & { signal?: AbortSignal } = {}): Promise<FileMetadata> {
  const url = resolveUrl(ref.endpoint, ref.repo, ref.revision, ref.file);
  const base = {
    method: 'HEAD' as const,
    token: opts.token,
    tokenOrigin: new URL(ref.endpoint).origin,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    userAgent: opts.userAgent,
  };
  // Hub-internal redirects (same origin, relative: a renamed repo, /api/resolve-cache/ for small files) are
  // followed here; the first response that is not one carries the metadata (a redirect to the CDN, or the file).
  let r = await hubRequest(url, { ...base, followRedirects: false });
  for (let hop = 0; hop < 5; hop++) {
    const loc = header(r.headers, 'location');
    if (r.status < 300 || r.status >= 400 || !loc || header(r.headers, 'x-linked-size') !== undefined) break;
    const next = new URL(loc, r.url);
    if (next.origin !== new URL(url).origin) break;
    r.body.resume();
    r = await hubRequest(next.href, { ...base, followRedirects: false });
  }
  r.body.resume();
  if (r.status >= 400)
    throw statusError(r.status, {
      url,
      ...ref,
      endpoint: ref.endpoint,
      tokenSent: r.tokenSent,
      errorCode: header(r.headers, 'x-error-code'),
      errorMessage: header(r.headers, 'x-error-message'),
    });
  const linkedSize = header(r.headers, 'x-linked-size');
  const linkedEtag = header(r.headers, 'x-linked-etag');
  const etag = linkedEtag ?? header(r.headers, 'etag');
  const commit = header(r.headers, 'x-repo-commit');
  let size = parseSize(linkedSize);
  if (size === undefined) {
    if (r.status >= 300 && r.status < 400) {
      const f = await hubRequest(url, { ...base, followRedirects: true });
      f.body.resume();
      if (f.status >= 400) throw statusError(f.status, { url: f.url, ...ref, tokenSent: f.tokenSent });
      size = parseSize(header(f.headers, 'content-length'));
    } else {
      size = parseSize(header(r.headers, 'content-length'));
    }
  }
  return { size, sha256: sha256FromEtag(linkedEtag), etag, commit };
}

export interface RepoSibling {
  rfilename: string;
  size?: number;
}

/** The files of a repo at a revision (`/api/models/{repo}/revision/{revision}?blobs=true`). */
export async function listRepoFiles(
  endpoint: string,
  repo: string,
  revision: string,
  opts: HubOptions & { signal?: AbortSignal } = {},
): Promise<{ commit?: string; files: RepoSibling[] }> {
  const url = `${endpoint.replace(/\/+$/, '')}/api/models/${encodePath(repo)}/revision/${encodeURIComponent(revision)}?blobs=true`;
  const r = await hubRequest(url, {
    token: opts.token,
    tokenOrigin: new URL(endpoint).origin,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    userAgent: opts.userAgent,
  });
  const text = await readText(r.body).catch((e) => {
    throw networkError(e, url, opts.signal);
  });
  if (r.status >= 400) {
    let msg: string | undefined;
    try {
      msg = JSON.parse(text).error;
    } catch {
      /* not JSON */
    }
    throw statusError(r.status, { url, repo, revision, endpoint, tokenSent: r.tokenSent, errorCode: header(r.headers, 'x-error-code'), errorMessage: msg });
  }
  let json: { sha?: string; siblings?: { rfilename?: string; size?: number; lfs?: { size?: number } }[] };
  try {
    json = JSON.parse(text);
  } catch {
    throw new HubError('http', `${repo}: the hub's file list is not JSON (${url})`, { url, repo });
  }
  const files: RepoSibling[] = [];
  for (const s of json.siblings ?? []) {
    if (typeof s.rfilename !== 'string') continue;
    const size = s.lfs?.size ?? s.size;
    files.push({ rfilename: s.rfilename, size: typeof size === 'number' ? size : undefined });
  }
  return { commit: json.sha, files };
}
