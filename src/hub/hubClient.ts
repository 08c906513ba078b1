import { DEFAULT_ENDPOINT, HubError, networkError, statusError } from './hubErrors';
import type { HttpTransport } from '../net/httpTransport';
import { header, hubRequest, type HubTransportOptions, readText, withTransport } from './hubRequest';

/**
 * Minimal Hugging Face hub client: URL scheme, endpoint resolution, file metadata from the first response
 * (X-Linked-Size / X-Linked-Etag) and the file list. Requests (redirects, the token kept to the endpoint's
 * origin, proxies) are hubRequest.ts over the shared transport src/net/httpTransport.ts; errors hubErrors.ts.
 * No `vscode` import.
 */

export { HubError, type HubErrorKind, isHubError, isTransient, networkError, statusError } from './hubErrors';
export { header, hubRequest, type HubResponse, type RequestOptions, withTransport } from './hubRequest';

export interface HubOptions extends HubTransportOptions {
  /** Explicit endpoint (a setting); otherwise HF_ENDPOINT, otherwise https://huggingface.co. */
  endpoint?: string;
  /** Bearer token for gated or private repos. Sent to the endpoint's origin only. */
  token?: string;
  /** No connection, answer or body data for this long (ms) fails a request (default 30 s). */
  timeoutMs?: number;
  userAgent?: string;
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
export function fileMetadata(ref: FileRef, opts: HubOptions & { signal?: AbortSignal } = {}): Promise<FileMetadata> {
  return withTransport(opts, (http) => headFile(http, ref, opts));
}

async function headFile(http: HttpTransport, ref: FileRef, opts: HubOptions & { signal?: AbortSignal }): Promise<FileMetadata> {
  const url = resolveUrl(ref.endpoint, ref.repo, ref.revision, ref.file);
  const base = {
    http,
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
export function listRepoFiles(
  endpoint: string,
  repo: string,
  revision: string,
  opts: HubOptions & { signal?: AbortSignal } = {},
): Promise<{ commit?: string; files: RepoSibling[] }> {
  return withTransport(opts, (http) => repoListing(http, endpoint, repo, revision, opts));
}

async function repoListing(
  http: HttpTransport,
  endpoint: string,
  repo: string,
  revision: string,
  opts: HubOptions & { signal?: AbortSignal },
): Promise<{ commit?: string; files: RepoSibling[] }> {
  const url = `${endpoint.replace(/\/+$/, '')}/api/models/${encodePath(repo)}/revision/${encodeURIComponent(revision)}?blobs=true`;
  const r = await hubRequest(url, {
    http,
    token: opts.token,
    tokenOrigin: new URL(endpoint).origin,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    userAgent: opts.userAgent,
  });
  const text = await readText(r.body).catch((e) => {
    throw networkError(e, url, opts.signal, http.proxies);
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
