import { bodyError, connectionError, httpError, ServerError } from './serverErrors';
import type { ServerOptions } from './serverOptions';
import { errorBody, MAX_ANSWER_BYTES, readCapped } from './streamLines';

// The tokenizer routes of llama.cpp and vLLM (/tokenize, /detokenize), for the connect-time checks.

export async function detokenize(o: ServerOptions, ids: number[]): Promise<string> {
  const body = await postToRoot(o, '/detokenize', { tokens: ids, model: o.model });
  // llama.cpp answers {content}, vLLM {prompt}.
  const text = typeof body.content === 'string' ? body.content : body.prompt;
  if (typeof text !== 'string') throw new ServerError('answered without the text', false);
  return text;
}

/** llama.cpp: [id, ...] or [{id, piece}, ...] (with_pieces); vLLM: [id, ...]. */
export function tokenIds(body: Record<string, unknown>): number[] {
  if (!Array.isArray(body.tokens)) throw new ServerError('answered without tokens', false);
  return body.tokens.map((t) => {
    const id = typeof t === 'number' ? t : (t as { id?: unknown })?.id;
    if (typeof id !== 'number') throw new ServerError('answered with a token that is not an id', false);
    return id;
  });
}

/**
 * POST to a route at the server's root: /tokenize and /detokenize are not under /v1 (llama.cpp, vLLM), so a
 * URL that ends in /v1, as users copy it from docs, loses that part; a gateway's path prefix stays.
 */
export async function postToRoot(o: ServerOptions, route: string, body: unknown): Promise<Record<string, unknown>> {
  const u = new URL(o.url);
  u.pathname = `${u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}${route}`;
  u.search = '';
  const url = u.toString();
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    if ((err as Error)?.name === 'TimeoutError') throw new ServerError(`did not answer within ${o.timeoutMs} ms`, true);
    throw connectionError(url, err);
  }
  if (!res.ok) throw httpError(res.status, url, await errorBody(res), res.headers.get('retry-after'));
  const text = await readCapped(res.body, MAX_ANSWER_BYTES, route).catch((err: unknown) => {
    throw bodyError(url, err, o.timeoutMs);
  });
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ServerError('did not answer with a JSON object', false);
}
