import type { Readable } from 'node:stream';
import { type HttpTransport, httpTransport, type TransportOptions } from '../net/httpTransport';
import { HubError, networkError } from './hubErrors';

/**
 * The hub client's requests, through the same transport as the server backends (src/net/httpTransport.ts:
 * VS Code's proxy settings, HTTPS_PROXY / NO_PROXY, a private CA): one request at a time with its body
 * streamed, redirects followed here (the Authorization header is dropped when a redirect leaves the
 * endpoint's origin, as huggingface_hub does). No `vscode` import.
 */

export type HttpHeaders = Record<string, string | string[] | undefined>;

export interface HubTransportOptions {
  /** Proxy and TLS settings (VS Code's http.proxy, http.noProxy, http.proxyStrictSSL); env: see `env`. */
  transport?: TransportOptions;
  /** An open transport to use (and leave open) instead of one made from `transport` for the call. */
  http?: HttpTransport;
  /** Environment for HF_ENDPOINT, and for HTTPS_PROXY / NO_PROXY unless `transport.env` is given. */
  env?: NodeJS.ProcessEnv;
}

/** Runs `fn` with `opts.http`, or with a transport made from the settings for this call and closed after. */
export async function withTransport<T>(opts: HubTransportOptions, fn: (http: HttpTransport) => Promise<T>): Promise<T> {
  if (opts.http) return fn(opts.http);
  let http: HttpTransport;
  try {
    http = httpTransport({ ...opts.transport, env: opts.transport?.env ?? opts.env });
  } catch (e) {
    throw new HubError('http', `Cannot download: ${(e as Error).message}.`, { code: 'BadProxy' });
  }
  try {
    return await fn(http);
  } finally {
    await http.close();
  }
}

export interface HubResponse {
  status: number;
  headers: HttpHeaders;
  /** The URL that gave this response (after redirects). */
  url: string;
  /** Headers of the first response (before redirects): the hub's metadata. */
  firstHeaders: HttpHeaders;
  firstStatus: number;
  body: Readable;
  tokenSent: boolean;
}

export interface RequestOptions {
  http: HttpTransport;
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  token?: string;
  /** Origin the token may be sent to (the endpoint). Default: the origin of the first URL. */
  tokenOrigin?: string;
  signal?: AbortSignal;
  followRedirects?: boolean;
  maxRedirects?: number;
  /** No connection, no answer, or no body data for this long (ms) fails the request (default 30 s). */
  timeoutMs?: number;
  userAgent?: string;
}

interface RawResponse {
  status: number;
  headers: HttpHeaders;
  body: Readable;
}

async function requestOnce(
  http: HttpTransport,
  url: URL,
  method: 'GET' | 'HEAD',
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<RawResponse> {
  if (signal?.aborted) throw new HubError('cancelled', 'Download cancelled', { url: url.href });
  try {
    const r = await http.dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { status: r.statusCode, headers: r.headers, body: r.body };
  } catch (e) {
    throw networkError(e, url.href, signal, http.proxies);
  }
}

/** One request, following redirects (relative or to another host/port) when asked. */
export async function hubRequest(url: string, opts: RequestOptions): Promise<HubResponse> {
  const method = opts.method ?? 'GET';
  const follow = opts.followRedirects ?? true;
  const max = opts.maxRedirects ?? 10;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let current = new URL(url);
  const tokenOrigin = opts.tokenOrigin ?? current.origin;
  let first: { status: number; headers: HttpHeaders } | undefined;
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
    const res = await requestOnce(opts.http, current, method, headers, opts.signal, timeoutMs);
    if (!first) first = { status: res.status, headers: res.headers };
    const location = header(res.headers, 'location');
    if (follow && res.status >= 300 && res.status < 400 && location) {
      res.body.resume();
      if (hop >= max) throw new HubError('http', `Too many redirects from ${url}`, { url, status: res.status });
      current = new URL(location, current);
      continue;
    }
    return { ...res, url: current.href, firstHeaders: first.headers, firstStatus: first.status, tokenSent };
  }
}

/** Reads a small body (an error or API answer) as text, at most `limit` bytes. */
export async function readText(res: Readable, limit = 4 << 20): Promise<string> {
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

export function header(h: HttpHeaders, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
