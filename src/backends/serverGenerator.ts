import type { GenerateHooksLike, Generator } from '../completion/generator';
import { TextStopper } from '../engine/decode/stopping';
import { cancelledResult } from '../engine/shared/cancelledResult';
import { type DecodeOptions, resolveDecodeOptions } from '../engine/shared/decodeOptions';
import { type Prompt, promptText } from '../engine/shared/prompt';
import type { FinishReason, GenerateResult, GenerationStats } from '../engine/shared/types';
import { connectionError, httpError, ServerError } from './serverErrors';
import { streamPayloads } from './streamLines';
import { type Chunk, PROTOCOLS, type ServerKind } from './protocols';

export interface ServerOptions {
  kind: ServerKind;
  /** Base URL, e.g. http://127.0.0.1:8080 (no trailing path). */
  url: string;
  /** Model name (OpenAI-compatible servers and Ollama; llama.cpp serves one model). */
  model?: string;
  apiKey?: string;
  /** The longest a request may take before it is abandoned with an error. */
  timeoutMs: number;
  /** The HTTP client (proxy and CA settings applied); the global fetch when absent. */
  fetch?: typeof fetch;
}

/**
 * A completion server behind the pipeline's Generator seam: llama.cpp's /infill, OpenAI-compatible
 * /v1/completions (vLLM, SGLang, LM Studio, llama.cpp) or Ollama's /api/generate. The response streams; the
 * same text stop rules as the local engine run on it, and the request is aborted as soon as one fires, the
 * caller cancels, or the timeout passes, so a server slot is never held for text nobody reads.
 */
export class ServerGenerator implements Generator {
  /** After a 429/503 with Retry-After: requests fail at once until then (no hammering a busy server). */
  private blockedUntil = 0;
  private blockedBy: ServerError | null = null;

  constructor(
    private readonly opts: ServerOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks: GenerateHooksLike = {}): Promise<GenerateResult> {
    if (hooks.signal?.aborted) return cancelledResult();
    if (this.blockedBy && Date.now() < this.blockedUntil) throw this.blockedBy;
    const t0 = this.now();
    const opts = resolveDecodeOptions(options);
    const protocol = PROTOCOLS[this.opts.kind];
    const request = protocol.request({ prompt: promptText(prompt), infill: hooks.infill, opts, model: this.opts.model });
    const url = new URL(request.path, this.opts.url).toString();
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => abort.abort(new ServerError(`${url} gave no complete answer within ${this.opts.timeoutMs} ms`, true)), this.opts.timeoutMs);
    try {
      let res: Response;
      try {
        res = await (this.opts.fetch ?? fetch)(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
          body: JSON.stringify(request.body),
          signal: abort.signal,
        });
      } catch (err) {
        if (hooks.signal?.aborted) return cancelledResult();
        if (abort.signal.reason instanceof ServerError) throw abort.signal.reason;
        throw connectionError(url, err);
      }
      if (!res.ok || !res.body) {
        const err = httpError(res.status, url, await res.text().catch(() => ''), res.headers.get('retry-after'));
        if (err.retryAfterMs !== undefined) {
          this.blockedUntil = Date.now() + err.retryAfterMs;
          this.blockedBy = err;
        }
        throw err;
      }
      return await this.read(res.body, request.stream, opts, hooks, t0, abort);
    } catch (err) {
      if (hooks.signal?.aborted) return cancelledResult();
      if (abort.signal.reason instanceof ServerError) throw abort.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
      abort.abort(); // closes the connection: the server frees the slot
    }
  }

  /** Reads the stream through the stop rules; the first rule that fires ends the request. */
  private async read(
    body: ReadableStream<Uint8Array>,
    format: 'sse' | 'ndjson',
    opts: DecodeOptions,
    hooks: GenerateHooksLike,
    t0: number,
    abort: AbortController,
  ): Promise<GenerateResult> {
    const protocol = PROTOCOLS[this.opts.kind];
    const stopper = new TextStopper(opts, t0);
    let text = '';
    const tokenLogprobs: number[] = [];
    const tokenTextEnds: number[] = [];
    let finish: FinishReason = 'length';
    let last: Chunk | null = null;
    const emit = (delta: string) => {
      if (!delta) return;
      text += delta;
      hooks.onText?.(delta);
    };
    for await (const payload of streamPayloads(body as unknown as AsyncIterable<Uint8Array>, format)) {
      const chunk = protocol.parse(payload);
      last = chunk;
      for (const lp of chunk.logprobs) {
        tokenLogprobs.push(lp.logprob);
        tokenTextEnds.push((tokenTextEnds.at(-1) ?? 0) + lp.chars);
      }
      emit(stopper.push(chunk.text, this.now()));
      if (stopper.finishReason) {
        finish = stopper.finishReason;
        break;
      }
      if (chunk.done) {
        finish = chunk.finish ?? 'eos';
        break;
      }
    }
    if (!last) throw new ServerError('the server closed the stream without an answer', true);
    if (!stopper.finishReason) emit(stopper.flush());
    if (!stopper.finishReason && !last.done && !abort.signal.aborted) throw new ServerError('the server cut the stream off before the end of the answer', true);
    // The logprobs describe the raw stream; keep those of the tokens that made it into the text.
    let kept = tokenTextEnds.findIndex((e) => e >= text.length);
    kept = kept < 0 ? tokenTextEnds.length : kept + 1;
    const stats: GenerationStats = { ...cancelledResult().stats, ...last.stats, totalMs: this.now() - t0 };
    stats.generatedTokens = stats.generatedTokens || tokenLogprobs.length;
    const seq = {
      text,
      finishReason: finish,
      logprob: NaN,
      tokens: [],
      tokenLogprobs: tokenLogprobs.slice(0, kept),
      tokenTextEnds: tokenTextEnds.slice(0, kept),
    };
    return { ...seq, sequences: [seq], stats };
  }
}
