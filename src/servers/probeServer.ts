import { endpoint } from './endpoint';
import type { ServerOptions } from './serverOptions';
import { errorBody, MAX_ANSWER_BYTES, readCapped } from './streamLines';
import { bodyError, connectionError, httpError, ServerError } from './serverErrors';

export interface ProbeResult {
  /** The model's context window per request, when the server says. */
  contextTokens?: number;
  /** What the server calls its model(s), for the log. */
  models: string[];
  /**
   * Whether the server can build the FIM prompt from a prefix and a suffix itself (Ollama: the model's
   * "insert" capability); false: send Ghostline's own prompt. Undefined when the server does not say.
   */
  fillsInTheMiddle?: boolean;
  /** llama.cpp's server (its OpenAI-compatible routes too: `owned_by: "llamacpp"`): its requests take a grammar. */
  llamaCpp?: boolean;
}

/** Ollama's default num_ctx: the server truncates longer prompts whatever the model could take. */
const OLLAMA_DEFAULT_CONTEXT = 4096;

/**
 * Asks the server what it serves before the first suggestion, so a wrong URL, key or model name is one
 * clear message at connect time rather than an error on every keystroke. llama.cpp: GET /props (the
 * per-slot context); OpenAI-compatible: GET /v1/models (vLLM adds max_model_len); Ollama: POST /api/show.
 */
export async function probeServer(o: ServerOptions): Promise<ProbeResult> {
  if (o.kind === 'llama.cpp') {
    const props = await getJson(o, 'GET', '/props');
    const settings = obj(props.default_generation_settings);
    const ctx = num(settings.n_ctx) ?? num(props.n_ctx);
    const name = typeof props.model_path === 'string' ? props.model_path.split(/[\\/]/).pop()! : 'llama.cpp';
    return { contextTokens: ctx, models: [name], llamaCpp: true };
  }
  if (o.kind === 'openai') {
    const list = await getJson(o, 'GET', '/v1/models');
    const models = Array.isArray(list.data) ? list.data.map(obj) : [];
    const ids = models.map((m) => (typeof m.id === 'string' ? m.id : '')).filter(Boolean);
    const hit = models.find((m) => m.id === o.model);
    if (!hit) {
      const served = ids.length > 0 ? ids.map((id) => JSON.stringify(id)).join(', ') : 'none';
      throw new ServerError(`the server does not serve the model ${JSON.stringify(o.model)} (ghostline.server.model); it serves ${served}`, false);
    }
    return { contextTokens: num(hit.max_model_len) ?? num(obj(hit.meta).n_ctx_train), models: ids, llamaCpp: hit.owned_by === 'llamacpp' };
  }
  const show = await getJson(o, 'POST', '/api/show', { model: o.model });
  const info = obj(show.model_info);
  const trained = Object.entries(info).find(([k, v]) => k.endsWith('.context_length') && typeof v === 'number')?.[1] as number | undefined;
  const numCtx = /(?:^|\n)num_ctx\s+(\d+)/.exec(typeof show.parameters === 'string' ? show.parameters : '')?.[1];
  const ctx = numCtx ? Number(numCtx) : Math.min(trained ?? OLLAMA_DEFAULT_CONTEXT, OLLAMA_DEFAULT_CONTEXT);
  // Ollama 0.6+ lists capabilities ("completion", "insert", ...); older servers do not say.
  const caps = Array.isArray(show.capabilities) ? show.capabilities.filter((c): c is string => typeof c === 'string') : null;
  return { contextTokens: ctx, models: [o.model ?? ''], fillsInTheMiddle: caps ? caps.includes('insert') : undefined };
}

async function getJson(o: ServerOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const url = endpoint(o.url, path);
  const headers: Record<string, string> = { ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    if ((err as Error)?.name === 'TimeoutError') throw new ServerError(`${url} did not answer within ${o.timeoutMs} ms`, true);
    throw connectionError(url, err);
  }
  if (!res.ok) throw httpError(res.status, url, await errorBody(res), res.headers.get('retry-after'));
  const text = await readCapped(res.body, MAX_ANSWER_BYTES, path).catch((err: unknown) => {
    throw bodyError(url, err, o.timeoutMs);
  });
  try {
    return obj(JSON.parse(text));
  } catch {
    throw new ServerError(`${url} did not answer with JSON: is ghostline.server.url the ${o.kind} server?`, false);
  }
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
