/** An HTTP failure from a completion server, in words a user can act on. */
export class ServerError extends Error {
  constructor(
    message: string,
    /** Worth trying again later (429, 503, a dropped connection). */
    readonly retryable: boolean,
    /** From a Retry-After header, in ms. */
    readonly retryAfterMs?: number,
    /** The HTTP status, when the server answered with one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export function httpError(status: number, url: string, body: string, retryAfter: string | null): ServerError {
  const detail = body.trim().slice(0, 200);
  const after = retryAfterMs(retryAfter);
  const where = `${url} answered ${status}`;
  if (status === 401 || status === 403)
    return new ServerError(
      `${where}: the server refused the API key (set it with "Ghostline: Set Server Key")${detail ? `: ${detail}` : ''}`,
      false,
      undefined,
      status,
    );
  if (status === 404)
    return new ServerError(
      `${where}: no such endpoint or model (check ghostline.server.url and ghostline.server.model)${detail ? `: ${detail}` : ''}`,
      false,
      undefined,
      status,
    );
  if (status === 429 || status === 503)
    return new ServerError(`${where}: the server is busy${after !== undefined ? `, retry after ${Math.round(after / 1000)} s` : ''}`, true, after, status);
  return new ServerError(`${where}${detail ? `: ${detail}` : ''}`, status >= 500, undefined, status);
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(header);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

/** A fetch failure (refused, DNS, reset) as one clear message. */
export function connectionError(url: string, err: unknown): ServerError {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
  if (code === 'ECONNREFUSED') return new ServerError(`cannot connect to ${url}: nothing listens there (is the server running?)`, true);
  if (code === 'ENOTFOUND') return new ServerError(`cannot resolve the host of ${url}`, false);
  return new ServerError(`the request to ${url} failed: ${cause?.message ?? (err instanceof Error ? err.message : String(err))}`, true);
}

/**
 * An answer's body that could not be read to its end: the request's timeout, or a dropped connection, as the
 * request itself reports them; a body over its cap (ServerProtocolError) says so itself.
 */
export function bodyError(url: string, err: unknown, timeoutMs: number): Error {
  const name = (err as Error)?.name;
  if (name === 'TimeoutError') return new ServerError(`${url} did not answer within ${timeoutMs} ms`, true);
  if (name === 'ServerProtocolError' || name === 'AbortError') return err as Error;
  return connectionError(url, err);
}
