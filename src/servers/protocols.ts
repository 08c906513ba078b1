import type { InfillParts } from '../completion/generator';
import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { FinishReason, GenerationStats } from '../engine/shared/types';
import { HEALING_TOP_LOGPROBS, startsWithGrammar } from './serverHealing';
import { ServerProtocolError } from './streamLines';

export type ServerKind = 'llama.cpp' | 'openai' | 'ollama';
export const SERVER_KINDS: readonly ServerKind[] = ['llama.cpp', 'openai', 'ollama'];

export interface RequestInput {
  /** The whole prompt as text, the model's special tokens included (OpenAI-compatible servers, Ollama raw). */
  prompt: string;
  /**
   * The same prompt as the local model's token ids, sent instead of the text when set: the server's own
   * tokenization of the text differs from the model's (see tokenizerCheck.ts). llama.cpp's /completion and
   * /v1/completions (llama.cpp, vLLM) take a prompt as an array of ids; Ollama never gets them.
   */
  ids?: number[];
  /**
   * Token healing (serverHealing.ts): the text held back from the end of `ids`, which the answer must write
   * first. Sent as a grammar (llama.cpp; other servers ignore it) with the top candidates' log-probabilities.
   */
  healed?: string;
  /**
   * /infill with token healing: the prefix and the cursor line as the local tokenizer's ids, less the held-back
   * text (`input_prefix` takes ids; the cursor line, `prompt`, only text). Set only where the server tokenizes
   * as the local model does (the connect-time check's "same").
   */
  infillPrefixIds?: number[];
  /** The request as parts, for servers that build the FIM prompt themselves. */
  infill?: InfillParts;
  opts: DecodeOptions;
  model?: string;
  /** Completions asked for in this one request (llama.cpp's n_cmpl, OpenAI's n); 1 when absent. */
  n?: number;
  /**
   * Only the fields every server of the protocol takes (OpenAI-compatible: no top_k, seed, logprobs or
   * stream_options), for a server that refused the full request with 400 or 422.
   */
  minimal?: boolean;
}

/** A token's log-probability as the server reports it; `id` where it says (llama.cpp). */
export interface Candidate {
  id?: number;
  text: string;
  logprob: number;
}
export interface TokenLogprob extends Candidate {
  /** The token's length in the streamed text (a stop string's part of it is not streamed). */
  chars: number;
  /** The top candidates at its step, when asked for (healed requests). */
  top?: Candidate[];
}

/** One streamed piece of an answer, whatever the protocol. */
export interface Chunk {
  /** Which of the request's completions this piece belongs to (0 unless several were asked for). */
  index: number;
  text: string;
  /**
   * Per token of `text` (when the server reports them): its log-probability and length in characters, and
   * the top candidates at its step when asked for (healed requests).
   */
  logprobs: TokenLogprob[];
  done: boolean;
  finish?: FinishReason;
  /** Server timings and cache use, from the last chunk. */
  stats?: Partial<GenerationStats>;
}

export interface Protocol {
  request(input: RequestInput): { path: string; body: Record<string, unknown>; stream: 'sse' | 'ndjson' };
  /** A request (not streamed) that puts the prompt into the server's cache and generates nothing, or a token. */
  prefill(input: Omit<RequestInput, 'opts' | 'n'>): { path: string; body: Record<string, unknown> };
  /** Whether one request can ask for several completions (`n` in RequestInput); else one request each. */
  multi: boolean;
  /** Whether the server sends its token counts after the last completion has ended (OpenAI's usage chunk). */
  trailer?: boolean;
  /** The pieces in one streamed payload: one, or one per completion it carries (OpenAI's choices). */
  parse(payload: unknown): Chunk[];
}

const obj = (v: unknown): Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ServerProtocolError('the server sent a line that is not a JSON object');
  return v as Record<string, unknown>;
};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** llama.cpp's and Ollama's names for the sampler settings. */
const llamaSampling = (o: DecodeOptions) => ({
  temperature: o.temperature,
  top_k: o.topK,
  top_p: o.topP,
  min_p: o.minP,
  repeat_penalty: o.repetitionPenalty,
  seed: o.seed,
});

/**
 * Stop strings for the server: ours, plus the newline of a one-line request, so the server ends it itself
 * (and sends its timings) instead of being cut off by the client.
 */
const serverStops = (o: DecodeOptions) => (o.maxLines === 1 && !o.stop.includes('\n') ? [...o.stop, '\n'] : o.stop);

/** A healed request's grammar (llama.cpp's field, on /completion and /v1/completions alike). */
const healingGrammar = (healed: string | undefined) => (healed ? { grammar: startsWithGrammar(healed) } : {});

/** Top candidates as `[{token, logprob}]` (llama.cpp, chat-shaped) or `{token: logprob}` (the completions API). */
function topCandidates(v: unknown): Candidate[] | undefined {
  if (Array.isArray(v)) {
    return v.map(obj).flatMap((c) => {
      const lp = num(c.logprob) ?? (num(c.prob) ? Math.log(num(c.prob)!) : undefined);
      return lp === undefined ? [] : [{ id: num(c.id), text: str(c.token ?? c.tok_str), logprob: lp }];
    });
  }
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([text, lp]) => (num(lp) === undefined ? [] : [{ text, logprob: lp as number }]));
  return undefined;
}

/** The body of a llama.cpp request without the generation settings: the prompt (text or ids), or /infill's parts. */
const llamaPrompt = ({ prompt, ids, infill, infillPrefixIds }: Omit<RequestInput, 'opts'>) =>
  infill && !ids
    ? {
        path: '/infill',
        body: {
          input_prefix: infillPrefixIds ?? infill.prefix,
          input_suffix: infill.suffix,
          input_extra: infill.extra.map((c) => ({ filename: c.path, text: c.text })),
          prompt: infillPrefixIds ? '' : infill.middle,
        },
      }
    : { path: '/completion', body: { prompt: ids ?? prompt } };

/**
 * llama.cpp's own /infill: the server builds the FIM (and repo-level) prompt from the parts and caches it per
 * slot. Several completions: `n_cmpl` (this version: on /completion and /infill alike, at most the server's
 * slot count, -np; the prompt is processed once and copied to the other slots, each sampling with seed + i),
 * streamed interleaved, each payload naming its completion in `index`.
 */
const llamaCpp: Protocol = {
  multi: true,
  request({ prompt, ids, healed, infill, infillPrefixIds, opts, n = 1 }) {
    const { path, body } = llamaPrompt({ prompt, ids, infill, infillPrefixIds });
    return {
      path,
      body: {
        ...body,
        ...(path === '/infill' && opts.timeBudgetMs > 0 ? { t_max_predict_ms: opts.timeBudgetMs } : {}),
        // n_predict is only a bound: the local stop rules (lines, stop strings, time) end a request earlier.
        n_predict: opts.maxNewTokens,
        stop: serverStops(opts),
        stream: true,
        cache_prompt: true,
        n_probs: healed ? HEALING_TOP_LOGPROBS : 1,
        ...healingGrammar(healed),
        ...(n > 1 ? { n_cmpl: n } : {}),
        ...llamaSampling(opts),
      },
      stream: 'sse',
    };
  },
  prefill(input) {
    // n_predict 0: "the prompt is evaluated into the cache" (this version still samples one token, unsent).
    // The server builds /infill's prompt from its own settings, not the request's n_predict: the same prompt.
    const { path, body } = llamaPrompt(input);
    return { path, body: { ...body, n_predict: 0, cache_prompt: true, stream: false } };
  },
  parse(payload) {
    const p = obj(payload);
    const text = str(p.content);
    const logprobs: Chunk['logprobs'] = [];
    if (Array.isArray(p.completion_probabilities)) {
      for (const e of p.completion_probabilities) {
        const entry = obj(e);
        const token = str(entry.token ?? entry.content);
        // Newer servers give the chosen token's logprob; older ones a list of candidates with probabilities.
        let lp = num(entry.logprob);
        if (lp === undefined && Array.isArray(entry.probs)) {
          const hit = entry.probs.map(obj).find((c) => str(c.tok_str) === token);
          const prob = num(hit?.prob);
          if (prob !== undefined && prob > 0) lp = Math.log(prob);
        }
        if (lp !== undefined)
          logprobs.push({ id: num(entry.id), logprob: lp, chars: token.length, text: token, top: topCandidates(entry.top_logprobs ?? entry.probs) });
      }
    }
    const index = num(p.index) ?? 0;
    const done = p.stop === true;
    if (!done) return [{ index, text, logprobs, done }];
    const t = p.timings ? obj(p.timings) : {};
    // timings.cache_n: prompt tokens the slot already held; prompt_n: the ones it processed now.
    const processed = num(t.prompt_n) ?? num(p.tokens_evaluated) ?? 0;
    const reused = num(t.cache_n) ?? 0;
    const evaluated = processed + reused;
    const stopType = str(p.stop_type);
    return [
      {
        index,
        text,
        logprobs,
        done,
        finish: stopType === 'limit' ? 'length' : stopType === 'word' ? 'stop' : 'eos',
        stats: {
          promptTokens: evaluated,
          reusedTokens: reused,
          prefillTokens: processed,
          generatedTokens: num(t.predicted_n) ?? 0,
          prefillMs: num(t.prompt_ms) ?? 0,
          decodeMs: num(t.predicted_ms) ?? 0,
        },
      },
    ];
  },
};

/**
 * OpenAI-compatible /v1/completions. The FIM prompt goes in with the model's special tokens as text (vLLM
 * rejects `suffix`); the stop strings also carry the family's end markers. Several completions: `n`, streamed
 * interleaved, each chunk's choices naming theirs in `index` (llama.cpp takes `n` as n_cmpl, with its limit).
 */
const openai: Protocol = {
  multi: true,
  trailer: true,
  request({ prompt, ids, healed, opts, model, n = 1, minimal = false }) {
    const extensions = minimal
      ? {}
      : {
          ...(opts.topK > 0 ? { top_k: opts.topK } : {}),
          seed: opts.seed,
          logprobs: healed ? HEALING_TOP_LOGPROBS : 1,
          stream_options: { include_usage: true },
          ...healingGrammar(healed),
        };
    return {
      path: '/v1/completions',
      body: {
        model: model ?? '',
        prompt: ids ?? prompt,
        max_tokens: opts.maxNewTokens,
        temperature: opts.temperature,
        top_p: opts.topP,
        // The minimal request sends 4 (OpenAI's own limit), the last ones first: the newline of a one-line request.
        ...(serverStops(opts).length ? { stop: minimal ? [...serverStops(opts)].reverse().slice(0, 4) : serverStops(opts).slice(0, 16) } : {}),
        ...(n > 1 ? { n } : {}),
        stream: true,
        ...extensions,
      },
      stream: 'sse',
    };
  },
  prefill({ prompt, ids, model }) {
    // One token, not 0: OpenAI and vLLM reject max_tokens 0 (llama.cpp takes it, and still samples one); the
    // prompt then sits in the server's prefix cache (vLLM's automatic prefix caching, llama.cpp's slot).
    return { path: '/v1/completions', body: { model: model ?? '', prompt: ids ?? prompt, max_tokens: 1, temperature: 0, stream: false } };
  },
  parse(payload) {
    const p = obj(payload);
    if (p.error) throw new ServerProtocolError(`the server reported an error: ${JSON.stringify(p.error).slice(0, 200)}`);
    const usage = p.usage ? obj(p.usage) : null;
    const stats = usage ? { promptTokens: num(usage.prompt_tokens) ?? 0, generatedTokens: num(usage.completion_tokens) ?? 0 } : undefined;
    const choices = Array.isArray(p.choices) ? p.choices.map(obj) : [];
    // The usage alone (include_usage, after the last choice): the end of the answer.
    if (choices.length === 0) return usage ? [{ index: 0, text: '', logprobs: [], done: true, stats }] : [];
    return choices.map((choice, i) => {
      const logprobs: Chunk['logprobs'] = [];
      const lp = choice.logprobs ? obj(choice.logprobs) : null;
      if (lp && Array.isArray(lp.token_logprobs) && Array.isArray(lp.tokens)) {
        // The completions API's shape (vLLM, OpenAI).
        const tops = Array.isArray(lp.top_logprobs) ? lp.top_logprobs : [];
        lp.token_logprobs.forEach((v, k) => {
          const n = num(v);
          const token = str((lp.tokens as unknown[])[k]);
          if (n !== undefined) logprobs.push({ logprob: n, chars: token.length, text: token, top: topCandidates(tops[k]) });
        });
      } else if (lp && Array.isArray(lp.content)) {
        // The chat API's shape, which llama.cpp's server also uses for completions.
        for (const e of lp.content.map(obj)) {
          const n = num(e.logprob);
          if (n !== undefined) logprobs.push({ id: num(e.id), logprob: n, chars: str(e.token).length, text: str(e.token), top: topCandidates(e.top_logprobs) });
        }
      }
      const reason = str(choice.finish_reason);
      return {
        index: num(choice.index) ?? i,
        text: str(choice.text),
        logprobs,
        done: reason !== '',
        finish: reason === 'length' ? 'length' : reason === 'stop' ? 'eos' : undefined,
        stats,
      };
    });
  },
};

/**
 * Ollama's /api/generate: FIM through the model's own template (`suffix`), or our prompt verbatim (`raw`).
 * No `n`: several completions are several requests (the client sends them in parallel, each its own seed).
 * `logprobs: true` (a top-level field since Ollama 0.12.11; older servers ignore it): each streamed line then
 * carries its tokens' log-probabilities, which the confidence gate scores as it does llama.cpp's.
 */
const ollamaPrompt = ({ prompt, infill }: Omit<RequestInput, 'opts'>) =>
  infill ? { prompt: infill.prefix + infill.middle, suffix: infill.suffix } : { prompt, raw: true };

const ollama: Protocol = {
  multi: false,
  request({ prompt, infill, opts, model }) {
    const options = { ...llamaSampling(opts), num_predict: opts.maxNewTokens, stop: serverStops(opts) };
    return {
      path: '/api/generate',
      body: { model: model ?? '', ...ollamaPrompt({ prompt, infill }), stream: true, logprobs: true, options },
      stream: 'ndjson',
    };
  },
  prefill({ prompt, infill, model }) {
    // An empty prompt only loads the model; the prompt with one token to generate also fills the runner's
    // cache. No keep_alive: one in the request would override the user's OLLAMA_KEEP_ALIVE (default 5 min),
    // which the load already starts.
    return { path: '/api/generate', body: { model: model ?? '', ...ollamaPrompt({ prompt, infill }), stream: false, options: { num_predict: 1 } } };
  },
  parse(payload) {
    const p = obj(payload);
    if (p.error) throw new ServerProtocolError(`the server reported an error: ${str(p.error).slice(0, 200)}`);
    const done = p.done === true;
    const ms = (ns: unknown) => (num(ns) ?? 0) / 1e6;
    const logprobs: Chunk['logprobs'] = [];
    // [{token, logprob, bytes, top_logprobs}] per line, for that line's tokens.
    for (const e of Array.isArray(p.logprobs) ? p.logprobs.map(obj) : []) {
      const lp = num(e.logprob);
      if (lp !== undefined) logprobs.push({ logprob: lp, chars: str(e.token).length, text: str(e.token) });
    }
    return [
      {
        index: 0,
        text: str(p.response),
        logprobs,
        done,
        finish: done ? (p.done_reason === 'length' ? 'length' : 'eos') : undefined,
        stats: done
          ? {
              promptTokens: num(p.prompt_eval_count) ?? 0,
              prefillTokens: num(p.prompt_eval_count) ?? 0,
              generatedTokens: num(p.eval_count) ?? 0,
              prefillMs: ms(p.prompt_eval_duration),
              decodeMs: ms(p.eval_duration),
            }
          : undefined,
      },
    ];
  },
};

export const PROTOCOLS: Record<ServerKind, Protocol> = { 'llama.cpp': llamaCpp, openai, ollama };
