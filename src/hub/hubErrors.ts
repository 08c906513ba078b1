import type { ProxyMap } from '../net/httpTransport';
import { proxyFailure, proxyFailureMessage } from '../net/proxyErrors';

/** The hub client's errors: what a failed request means, in words a user can act on. No `vscode` import. */

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

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
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** undici's timeouts, reported as ETIMEDOUT in words. */
const TIMEOUTS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  UND_ERR_BODY_TIMEOUT: 'the transfer stalled',
};

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

/**
 * Turns a socket error into a HubError with a message a user can act on. With `proxies` (the transport's),
 * a proxy that cannot be reached or refuses to forward is named as the cause, and not retried.
 */
export function networkError(e: unknown, url: string, signal?: AbortSignal, proxies?: ProxyMap): HubError {
  if (e instanceof HubError) return e;
  if (signal?.aborted) return new HubError('cancelled', 'Download cancelled', { url });
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  const host = safeHost(url);
  const viaProxy = proxyFailure(e, url, proxies);
  if (viaProxy) {
    const kind = viaProxy.reason === 'unreachable' ? 'offline' : 'http';
    return new HubError(kind, proxyFailureMessage(viaProxy, url), { url, code: viaProxy.reason === 'unreachable' ? viaProxy.code : 'ProxyRefused' });
  }
  if (TIMEOUTS[code]) return new HubError('http', `Connection to ${host} failed: ${TIMEOUTS[code]} for too long (ETIMEDOUT).`, { url, code: 'ETIMEDOUT' });
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
