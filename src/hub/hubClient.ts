import { DEFAULT_ENDPOINT, HubError, networkError, statusError } from './hubErrors';
import type { HttpTransport } from '../net/httpTransport';
import { header, hubRequest, type HubTransportOptions, readText, withTransport } from './hubRequest';
import { encodePath, resolveUrl } from './repoRef';
import { parseSize, sha256FromEtag } from './responseHeaders';

/**
 * Minimal Hugging Face hub client: endpoint resolution, file metadata from the first response
 * (X-Linked-Size / X-Linked-Etag) and the file list. Repo ids and URLs are repoRef.ts, header parsing
 * responseHeaders.ts, requests (redirects, the token kept to the endpoint's origin, proxies) hubRequest.ts over
 * the shared transport src/net/httpTransport.ts, errors hubErrors.ts. No `vscode` import.
 */

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
