import type { InfillParts } from '../completion/generator';
import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { FinishReason, GenerationStats } from '../engine/shared/types';
import { ServerProtocolError } from './streamLines';

export type ServerKind = 'llama.cpp' | 'openai' | 'ollama';
export const SERVER_KINDS: readonly ServerKind[] = ['llama.cpp', 'openai', 'ollama'];

export interface RequestInput {
  /** The whole prompt as text, the model's special tokens included (OpenAI-compatible servers, Ollama raw). */
  prompt: string;
  /** The request as parts, for servers that build the FIM prompt themselves. */
  infill?: InfillParts;
  opts: DecodeOptions;
  model?: string;
}

/** One streamed piece of an answer, whatever the protocol. */
export interface Chunk {
  text: string;
  /** Per token of `text` (when the server reports them): its log-probability and length in characters. */
  logprobs: { logprob: number; chars: number }[];
  done: boolean;
  finish?: FinishReason;
  /** Server timings and cache use, from the last chunk. */
  stats?: Partial<GenerationStats>;
}

export interface Protocol {
  request(input: RequestInput): { path: string; body: Record<string, unknown>; stream: 'sse' | 'ndjson' };
  parse(payload: unknown): Chunk;
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

/** llama.cpp's own /infill: the server builds the FIM (and repo-level) prompt from the parts and caches it per slot. */
const llamaCpp: Protocol = {
  request({ prompt, infill, opts }) {
    // n_predict is only a bound: the local stop rules (lines, stop strings, time) end a request earlier.
    const common = { n_predict: opts.maxNewTokens, stop: serverStops(opts), stream: true, cache_prompt: true, n_probs: 1, ...llamaSampling(opts) };
    if (!infill) return { path: '/completion', body: { prompt, ...common }, stream: 'sse' };
    return {
      path: '/infill',
      body: {
        input_prefix: infill.prefix,
        input_suffix: infill.suffix,
        input_extra: infill.extra.map((c) => ({ filename: c.path, text: c.text })),
        prompt: infill.middle,
        ...(opts.timeBudgetMs > 0 ? { t_max_predict_ms: opts.timeBudgetMs } : {}),
        ...common,
      },
      stream: 'sse',
    };
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
        if (lp !== undefined) logprobs.push({ logprob: lp, chars: token.length });
      }
    }
    const done = p.stop === true;
    if (!done) return { text, logprobs, done };
    const t = p.timings ? obj(p.timings) : {};
    // timings.cache_n: prompt tokens the slot already held; prompt_n: the ones it processed now.
    const processed = num(t.prompt_n) ?? num(p.tokens_evaluated) ?? 0;
    const reused = num(t.cache_n) ?? 0;
    const evaluated = processed + reused;
    const stopType = str(p.stop_type);
    return {
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
    };
  },
};

/**
 * OpenAI-compatible /v1/completions. The FIM prompt goes in with the model's special tokens as text (vLLM
 * rejects `suffix`); the stop strings also carry the family's end markers.
 */
const openai: Protocol = {
  request({ prompt, opts, model }) {
    return {
      path: '/v1/completions',
      body: {
        model: model ?? '',
        prompt,
        max_tokens: opts.maxNewTokens,
        temperature: opts.temperature,
        top_p: opts.topP,
        ...(opts.topK > 0 ? { top_k: opts.topK } : {}),
        ...(serverStops(opts).length ? { stop: serverStops(opts).slice(0, 16) } : {}),
        seed: opts.seed,
        stream: true,
        logprobs: 1,
        stream_options: { include_usage: true },
      },
      stream: 'sse',
    };
  },
  parse(payload) {
    const p = obj(payload);
    if (p.error) throw new ServerProtocolError(`the server reported an error: ${JSON.stringify(p.error).slice(0, 200)}`);
    const choice = Array.isArray(p.choices) && p.choices.length > 0 ? obj(p.choices[0]) : null;
    const usage = p.usage ? obj(p.usage) : null;
    const text = choice ? str(choice.text) : '';
    const logprobs: Chunk['logprobs'] = [];
    const lp = choice?.logprobs ? obj(choice.logprobs) : null;
    if (lp && Array.isArray(lp.token_logprobs) && Array.isArray(lp.tokens)) {
      // The completions API's shape (vLLM, OpenAI).
      lp.token_logprobs.forEach((v, i) => {
        const n = num(v);
        if (n !== undefined) logprobs.push({ logprob: n, chars: str((lp.tokens as unknown[])[i]).length });
      });
    } else if (lp && Array.isArray(lp.content)) {
      // The chat API's shape, which llama.cpp's server also uses for completions.
      for (const e of lp.content.map(obj)) {
        const n = num(e.logprob);
        if (n !== undefined) logprobs.push({ logprob: n, chars: str(e.token).length });
      }
    }
    const reason = choice ? str(choice.finish_reason) : '';
    const done = reason !== '' || (choice === null && usage !== null);
    return {
      text,
      logprobs,
      done,
      finish: reason === 'length' ? 'length' : reason === 'stop' ? 'eos' : undefined,
      stats: usage ? { promptTokens: num(usage.prompt_tokens) ?? 0, generatedTokens: num(usage.completion_tokens) ?? 0 } : undefined,
    };
  },
};

/** Ollama's /api/generate: FIM through the model's own template (`suffix`), or our prompt verbatim (`raw`). */
const ollama: Protocol = {
  request({ prompt, infill, opts, model }) {
    const options = { ...llamaSampling(opts), num_predict: opts.maxNewTokens, stop: serverStops(opts) };
    const body = infill ? { prompt: infill.prefix + infill.middle, suffix: infill.suffix } : { prompt, raw: true };
    return { path: '/api/generate', body: { model: model ?? '', ...body, stream: true, options }, stream: 'ndjson' };
  },
  parse(payload) {
    const p = obj(payload);
    if (p.error) throw new ServerProtocolError(`the server reported an error: ${str(p.error).slice(0, 200)}`);
    const done = p.done === true;
    const ms = (ns: unknown) => (num(ns) ?? 0) / 1e6;
    return {
      text: str(p.response),
      logprobs: [],
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
    };
  },
};

export const PROTOCOLS: Record<ServerKind, Protocol> = { 'llama.cpp': llamaCpp, openai, ollama };
