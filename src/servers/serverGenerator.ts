import { endpoint } from './endpoint';
import type { BackendHooks, Generator } from '../completion/generator';
import { cancelledResult, emptyStats } from '../engine/shared/cancelledResult';
import { type DecodeOptions, resolveDecodeOptions } from '../engine/shared/decodeOptions';
import { type Prompt, promptText } from '../engine/shared/prompt';
import type { GenerateResult, GenerationStats } from '../engine/shared/types';
import { connectionError, httpError, ServerError } from './serverErrors';
import { drainCapped, errorBody, streamPayloads } from './streamLines';
import type { PromptTokenizer } from './promptTokenizer';
import { planServerHealing } from './serverHealing';
import { StreamedCompletion, type StreamedResult } from './streamedCompletion';
import { type Chunk, PROTOCOLS, type RequestInput } from './protocols';
import type { ServerOptions } from './serverOptions';

/** How long the answer waits, once complete, for a trailer that carries the server's token counts. */
const TRAILER_GRACE_MS = 100;

/** The iterator's next value, or null when none comes within `ms`. */
async function nextWithin<T>(it: AsyncIterator<T>, ms: number): Promise<IteratorResult<T> | null> {
  if (ms <= 0) return null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([it.next(), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Alternatives after the first sample at least this hot. Servers have no beam search, so alternatives are
 * samples; at a greedy or near-greedy temperature (0, or the inline preset's 0.2 with top-k 8) N samples are
 * mostly N copies of one text. The first completion keeps the temperature asked for.
 */
export const ALTERNATIVE_MIN_TEMPERATURE = 0.6;

/** Completions `first` to `first + n - 1` of a request's alternatives, asked for in one HTTP request. */
interface Batch {
  first: number;
  n: number;
  opts: DecodeOptions;
}

/** A request's input before the decode options, and the text held back for token healing (serverHealing.ts). */
type ServerInput = Omit<RequestInput, 'opts'> & { healed?: string };

type Lane = StreamedResult;

/** What a connection settled about a server (src/servers/connectServer.ts). */
export interface ServerSetup {
  /** Send Ghostline's own prompt instead of asking the server to build the FIM prompt. */
  ownPrompt?: boolean;
  /** Send every prompt as this tokenizer's ids (the server has its vocabulary and splits text its own way). */
  tokenIds?: PromptTokenizer;
  /** The server tokenizes text as this tokenizer does: token healing is planned on its ids. */
  healer?: PromptTokenizer;
  /** The server's requests take a grammar (llama.cpp's server behind the OpenAI protocol). */
  grammar?: boolean;
}

/**
 * A completion server behind the pipeline's Generator seam: llama.cpp's /infill, OpenAI-compatible
 * /v1/completions (vLLM, SGLang, LM Studio, llama.cpp) or Ollama's /api/generate. The response streams; the
 * same text stop rules as the local engine run on it, and the request is aborted as soon as one fires, the
 * caller cancels, or the timeout passes, so a server slot is never held for text nobody reads.
 *
 * numReturnSequences > 1 (an explicit trigger's alternatives): sampled completions, asked for in one request
 * where the protocol can (llama.cpp n_cmpl, OpenAI n) and in parallel requests, one seed each, where it
 * cannot (Ollama); each runs through the stop rules on its own; identical texts are returned once.
 */
export class ServerGenerator implements Generator {
  /** Completions one request may ask for, once the server has said (llama.cpp: its slot count). */
  private maxPerRequest = Infinity;
  /**
   * Ghostline's own prompt instead of the server's FIM template: set by the connection (the server cannot fill in
   * the middle for its model, or prompts go as ids), or later when a server refuses its FIM route
   * (fallBackToOwnPrompt). Requests then carry the family's FIM tokens when known, else the prefix alone.
   */
  private ownPrompt: boolean;
  /** Set once a server took the minimal request after refusing the full one (see RequestInput.minimal). */
  private minimal = false;
  /**
   * Every prompt goes as these ids (the server has the local model's vocabulary but tokenizes text its own way,
   * or the same way on the OpenAI protocol), to /completion (llama.cpp, never /infill, which re-tokenizes its
   * text parts) or /v1/completions, so the served model reads what the local one would.
   */
  private readonly ids: PromptTokenizer | null;
  /**
   * Whether the server's requests take a grammar that steers token healing (llama.cpp's server, behind either
   * protocol): healing is then planned as the local engine plans it; else only mid-word, rejecting (serverHealing.ts).
   */
  private readonly steersHealing: boolean;
  /** The server tokenizes text as the local model does: /infill's token healing is planned on these ids. */
  private readonly healer: PromptTokenizer | null;

  /** `setup`: what connectServer settled about the server; fixed for the generator's life. */
  constructor(
    private readonly opts: ServerOptions,
    setup: ServerSetup = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    if (setup.tokenIds && opts.kind === 'ollama') throw new Error("Ollama's /api/generate takes no token ids");
    this.healer = setup.healer ?? null;
    // On the OpenAI protocol a server that tokenizes as the local model gets the ids too: the same tokens, and
    // document text that can never be read as a marker.
    this.ids = setup.tokenIds ?? (opts.kind === 'openai' ? (setup.healer ?? null) : null);
    this.ownPrompt = setup.ownPrompt === true || this.ids !== null;
    this.steersHealing = opts.kind === 'llama.cpp' || (setup.grammar === true && opts.kind !== 'ollama');
  }

  async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks: BackendHooks = {}): Promise<GenerateResult> {
    if (hooks.signal?.aborted) return cancelledResult();
    const t0 = this.now();
    const opts = resolveDecodeOptions(options);
    const input = this.input(prompt, hooks, opts.tokenHealing);
    const batches = this.batches(opts);
    // One signal for every request: the caller's cancel, or the first request failing, ends them all.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const runs = batches.map((b) =>
        this.run(b, input, { signal: stop.signal, ...(b.first === 0 ? { onText: hooks.onText, onFirstLine: hooks.onFirstLine } : {}) }, t0),
      );
      runs[0].catch(() => stop.abort());
      const settled = await Promise.allSettled(runs);
      if (hooks.signal?.aborted) return cancelledResult();
      if (settled[0].status === 'rejected') throw settled[0].reason;
      if (!settled[0].value) return cancelledResult();
      // The other alternatives are extras: one that failed (a busy server) leaves the first and the rest.
      const lanes = settled.flatMap((s) => (s.status === 'fulfilled' && s.value ? s.value : []));
      const stats: GenerationStats = { ...emptyStats(), ...lanes[0].stats, totalMs: this.now() - t0 };
      stats.generatedTokens = lanes.reduce((n, l) => n + (l.stats?.generatedTokens || l.streamedTokens), 0);
      const sequences = lanes.map((l) => l.seq).filter((q, i, all) => all.findIndex((o) => o.text === q.text) === i);
      return { ...sequences[0], sequences, stats };
    } finally {
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Fills the server's prompt cache with this prompt (or /infill's parts) and generates nothing, or one token
   * nobody reads: the next completion for the same place then only processes what changed. Rejects with the
   * same errors as generate; resolves at once when cancelled.
   */
  async prefill(prompt: Prompt, hooks: BackendHooks = {}): Promise<void> {
    const input = this.input(prompt, hooks);
    const request = PROTOCOLS[this.opts.kind].prefill(input);
    try {
      await this.post(request.path, request.body, hooks.signal, (res) => drainCapped(res.body));
    } catch (err) {
      if (!this.fallBackToOwnPrompt(input, err)) throw err;
      await this.prefill(prompt, hooks);
    }
  }

  get sendsOwnPrompt(): boolean {
    return this.ownPrompt;
  }

  get sendsTokenIds(): boolean {
    return this.ids !== null;
  }

  private input(prompt: Prompt, hooks: BackendHooks, heal = false): ServerInput {
    const infill = this.ownPrompt ? undefined : hooks.infill;
    if (heal && infill && this.healer && this.steersHealing && this.opts.kind === 'llama.cpp') {
      const before = infill.prefix + infill.middle;
      const healing = planServerHealing(this.healer, before, this.healer.encodeLiteral(before), 'steer');
      if (healing) return { prompt: promptText(prompt), infill, infillPrefixIds: healing.ids, healed: healing.healed, model: this.opts.model };
    }
    const ids = this.ids?.encodePrompt(prompt);
    const healing = heal && this.ids && ids ? planServerHealing(this.ids, prompt, ids, this.steersHealing ? 'steer' : 'reject') : null;
    return {
      prompt: promptText(prompt),
      ids: healing?.ids ?? ids,
      healed: healing?.healed,
      infill,
      model: this.opts.model,
    };
  }

  /**
   * An OpenAI-compatible server that refused the request itself (400, 422: an unknown field such as top_k,
   * seed, logprobs or stream_options, or more stop strings than it takes) may take the minimal one.
   * llama.cpp's answer to n beyond its slots is handled apart (it names the limit).
   */
  private mayTryMinimal(input: ServerInput, err: unknown): boolean {
    if (this.opts.kind !== 'openai' || this.minimal || input.minimal || !(err instanceof ServerError)) return false;
    return (err.status === 400 || err.status === 422) && !/Value must be between/.test(err.message);
  }

  /**
   * True (and the generator switched to its own prompt) when the error says the served model cannot fill in
   * the middle by the server's template: Ollama answers 400 "... does not support insert" to a `suffix`,
   * llama.cpp 501 "Infill is not supported by this model" to /infill (its GGUF has no FIM tokens).
   */
  private fallBackToOwnPrompt(input: ServerInput, err: unknown): boolean {
    if (!input.infill || !(err instanceof ServerError) || !/does not support insert|infill is not supported/i.test(err.message)) return false;
    this.ownPrompt = true;
    return true;
  }

  /**
   * The requests for opts.numReturnSequences completions: one request for all where the protocol can ask
   * for several, the first alone when the others sample hotter, one each otherwise (seed + i each).
   */
  private batches(opts: DecodeOptions): Batch[] {
    const n = Math.max(1, opts.numReturnSequences);
    const hot = Math.max(opts.temperature, ALTERNATIVE_MIN_TEMPERATURE);
    const perRequest = PROTOCOLS[this.opts.kind].multi ? this.maxPerRequest : 1;
    const out: Batch[] = [];
    for (let first = 0; first < n; ) {
      const alone = first === 0 && hot !== opts.temperature;
      const size = alone ? 1 : Math.min(perRequest, n - first);
      const batch = first === 0 ? opts : { ...opts, temperature: hot, seed: (opts.seed + first) >>> 0 };
      out.push({ first, n: size, opts: batch });
      first += size;
    }
    return out;
  }

  /** One request's completions, in order; null when cancelled. */
  private async run(b: Batch, input: ServerInput, hooks: BackendHooks, t0: number): Promise<Lane[] | null> {
    const request = PROTOCOLS[this.opts.kind].request({ ...input, opts: b.opts, n: b.n, minimal: this.minimal || input.minimal });
    try {
      return await this.post(request.path, request.body, hooks.signal, (res, abort) => this.read(res, request.stream, b, hooks, t0, abort, input.healed ?? ''));
    } catch (err) {
      if (this.fallBackToOwnPrompt(input, err)) return this.run(b, { ...input, infill: undefined }, hooks, t0);
      if (this.mayTryMinimal(input, err)) {
        // Once more with only the common fields; remembered only when that one is taken.
        const lanes = await this.run(b, { ...input, minimal: true }, hooks, t0).catch(() => Promise.reject(err));
        if (lanes) this.minimal = true;
        return lanes;
      }
      // llama.cpp takes n_cmpl (or `n`) up to its slot count (-np) and answers 400 beyond it: the limit is
      // remembered, and these completions asked for again in requests it takes.
      const limit = b.n > 1 && err instanceof ServerError ? /'n(?:_cmpl)?': Value must be between 1 <= value <= (\d+)/.exec(err.message) : null;
      const max = limit ? Math.max(1, Number(limit[1])) : 0;
      if (!limit || max >= b.n) throw err;
      this.maxPerRequest = max;
      const parts: Batch[] = [];
      for (let i = 0; i < b.n; i += max) parts.push({ first: b.first + i, n: Math.min(max, b.n - i), opts: { ...b.opts, seed: (b.opts.seed + i) >>> 0 } });
      const lanes = await Promise.all(parts.map((p) => this.run(p, input, p.first === b.first ? hooks : { signal: hooks.signal }, t0)));
      return lanes.some((l) => l === null) ? null : (lanes.flat() as Lane[]);
    }
  }

  /**
   * One POST: the caller's signal, the timeout and one clear error per failure; `use` reads the answer, and
   * the connection is closed after it (the server frees the slot). Null when the caller cancelled.
   */
  private async post<T>(
    path: string,
    body: Record<string, unknown>,
    signal: AbortSignal | undefined,
    use: (res: Response, abort: AbortController) => Promise<T>,
  ): Promise<T | null> {
    if (signal?.aborted) return null;
    const url = endpoint(this.opts.url, path);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => abort.abort(new ServerError(`${url} gave no complete answer within ${this.opts.timeoutMs} ms`, true)), this.opts.timeoutMs);
    try {
      let res: Response;
      try {
        res = await (this.opts.fetch ?? fetch)(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
          body: JSON.stringify(body),
          signal: abort.signal,
        });
      } catch (err) {
        if (signal?.aborted) return null;
        if (abort.signal.reason instanceof ServerError) throw abort.signal.reason;
        throw connectionError(url, err);
      }
      if (!res.ok || !res.body) {
        // A Retry-After rides on the error: ServerHealth (healthCheckedGenerator.ts) holds requests back until then.
        throw httpError(res.status, url, await errorBody(res), res.headers.get('retry-after'));
      }
      return await use(res, abort);
    } catch (err) {
      if (signal?.aborted) return null;
      if (abort.signal.reason instanceof ServerError) throw abort.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      abort.abort();
    }
  }

  /**
   * Reads the stream, each completion through its own stop rules (StreamedCompletion); the request ends when every
   * completion has (a rule that fires ends its completion; the server runs that one on, unread, to its own end),
   * after a short grace for a trailer with the server's token counts where the protocol sends one.
   */
  private async read(
    res: Response,
    format: 'sse' | 'ndjson',
    b: Batch,
    hooks: BackendHooks,
    t0: number,
    abort: AbortController,
    healed: string,
  ): Promise<Lane[]> {
    const protocol = PROTOCOLS[this.opts.kind];
    const lanes = Array.from({ length: b.n }, (_, i) => new StreamedCompletion(b.opts, t0, healed, i === 0 ? hooks : {}));
    let open = b.n;
    let any = false;
    // The server's own end of every completion, not a local stop rule: its trailer (OpenAI's usage) follows.
    let serverEnded = true;
    let graceUntil = 0;
    const payloads = streamPayloads(res.body as unknown as AsyncIterable<Uint8Array>, format)[Symbol.asyncIterator]();
    read: for (;;) {
      let next: IteratorResult<unknown> | null;
      let chunks: Chunk[];
      try {
        next = graceUntil ? await nextWithin(payloads, graceUntil - this.now()) : await payloads.next();
        if (!next || next.done) break;
        chunks = protocol.parse(next.value);
      } catch (err) {
        if (graceUntil) break; // every completion is complete: a broken trailer costs only its numbers
        throw err;
      }
      for (const chunk of chunks) {
        any = true;
        const lane = lanes[chunk.index];
        if (!lane) continue; // not one asked for
        const wasOpen = lane.finish === null;
        lane.take(chunk, this.now());
        if (!wasOpen || !lane.finish) continue;
        if (!chunk.done) serverEnded = false;
        if (--open === 0) {
          // OpenAI-compatible servers send the prompt's token count after the last completion: worth a moment.
          if (!protocol.trailer || !serverEnded || lanes[0].promptTokens !== undefined) break read;
          graceUntil = this.now() + TRAILER_GRACE_MS;
        }
      }
      if (graceUntil && lanes[0].promptTokens !== undefined) break;
    }
    // A pending read (the trailer never came) ends with the connection, which the caller closes.
    if (!graceUntil) await payloads.return?.(undefined);
    if (!any) throw new ServerError('the server closed the stream without an answer', true);
    // A completion the server never sent: it ignored n (it answered the first alone).
    return lanes.filter((lane) => lane.seen).map((lane) => lane.result(abort.signal.aborted));
  }
}
