import * as path from 'node:path';
import { Engine } from '../src/engine/engine';
import { interleaved, type ThroughputRow, type TokenTimes } from './interleaved';
import { syntheticPrompt } from './llamaCpp';
import { round } from './stats';

export type { ThroughputRow };

export interface VsTransformersResult {
  model: string;
  onnx: string;
  threads: number;
  prompt_tokens: number;
  new_tokens: number;
  rounds: number;
  ghostline: ThroughputRow;
  transformersjs: ThroughputRow;
  prefill_ratio: number;
  decode_ratio: number;
  /** Greedy decode from real code prompts, Ghostline as shipped (prompt lookup on) and with it off. */
  code: CodeDecodeResult | null;
}

export interface CodeDecodeResult {
  prompts: number;
  prompt_tokens_median: number;
  new_tokens: number;
  ghostline_plain_tokens_per_s: number;
  ghostline_speculative_tokens_per_s: number;
  transformersjs_tokens_per_s: number;
  ratio_plain: number;
  ratio_speculative: number;
  /** Prompts whose greedy text prompt lookup left unchanged (others diverge at a floating-point near-tie). */
  speculative_equal_prompts: number;
}

/** A model loaded in @huggingface/transformers (onnxruntime-node underneath), greedy generation from text. */
export interface TransformersJsSession {
  /** Greedy, cold (transformers.js keeps no cache between calls): tokenizes `prompt`, then exactly `n` new tokens. */
  generate(prompt: string, n: number): Promise<TokenTimes>;
  dispose(): Promise<void>;
}

/** `modelDir`'s `onnxFile` (its onnx/ folder) in transformers.js, fp32 inputs, on the CPU with `threads` threads. */
export async function openTransformersJs(modelDir: string, onnxFile: string, threads: number): Promise<TransformersJsSession> {
  // transformers.js is ESM-only: a real dynamic import (tsc would turn import() into require()).
  const tjs = (await new Function('m', 'return import(m)')('@huggingface/transformers')) as typeof import('@huggingface/transformers');
  tjs.env.allowRemoteModels = false;
  tjs.env.localModelPath = path.dirname(path.resolve(modelDir)) + path.sep;
  const id = path.basename(path.resolve(modelDir));
  const model = await tjs.AutoModelForCausalLM.from_pretrained(id, {
    dtype: 'fp32',
    device: 'cpu',
    model_file_name: path.basename(onnxFile, '.onnx'),
    session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
  } as Record<string, unknown>);
  const tokenizer = await tjs.AutoTokenizer.from_pretrained(id);
  return {
    async generate(prompt, n) {
      const enc = tokenizer(prompt) as Record<string, unknown>;
      // A streamer (duck-typed): put() gets the prompt first, then each new token as it is chosen.
      const times: number[] = [];
      const streamer = { put: () => void times.push(performance.now()), end: () => undefined };
      await model.generate({ ...enc, max_new_tokens: n, min_new_tokens: n, do_sample: false, streamer } as Record<string, unknown>);
      const tokens = times.slice(1);
      return { tokens: tokens.length, firstTokenAt: tokens[0] ?? 0, lastTokenAt: tokens[tokens.length - 1] ?? 0 };
    },
    dispose: () => (model as unknown as { dispose(): Promise<void> }).dispose(),
  };
}

/**
 * Ghostline's engine against @huggingface/transformers on the same ONNX file, the same thread count, in the
 * same process, interleaved round by round, both from the prompt text (tokenization included). Both measured
 * the same way: wall time of a generation of 1
 * token (prefill) and of N tokens with EOS ignored; decode rate = (N - 1) / (T(N) - T(1)).
 */
export async function vsTransformersJs(
  modelDir: string,
  onnxFile: string,
  opts: { threads: number; rounds: number; promptTokens: number; newTokens: number; codePrompts?: string[] },
): Promise<VsTransformersResult> {
  const theirs = await openTransformersJs(modelDir, onnxFile, opts.threads);
  const ours = await Engine.load(modelDir, { threads: opts.threads, onnxFile: path.basename(onnxFile) });
  const prompt = syntheticPrompt(ours, opts.promptTokens);
  const promptIds = ours.tokenize(prompt);

  const rows = await interleaved(
    async (n) => {
      ours.resetCache(); // cold, as transformers.js is on every call
      await ours.generate(prompt, { maxNewTokens: n, ignoreEos: true });
    },
    // Both sides start from the prompt text: tokenization is inside the timed region for both.
    async (n) => {
      await theirs.generate(prompt, n);
    },
    { ...opts, promptTokens: promptIds.length },
  );
  let code: CodeDecodeResult | null = null;
  const codePrompts = opts.codePrompts ?? [];
  if (codePrompts.length > 0) {
    // Per prompt, interleaved: T(1) and T(N) of each engine; decode rate = sum(N - 1) / sum(T(N) - T(1)).
    const time = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    const n = opts.newTokens;
    const spent = { plain: 0, spec: 0, theirs: 0 };
    let equal = 0;
    const lengths: number[] = [];
    for (const full of codePrompts) {
      // The end of the prompt, at most promptTokens tokens (transformers.js does not fit prompts to the context).
      const fullIds = ours.tokenize(full);
      const p = fullIds.length > opts.promptTokens ? ours.tokenizer.decode(fullIds.slice(-opts.promptTokens)) : full;
      lengths.push(ours.tokenize(p).length);
      const run = (spec: number, max: number) => async () => {
        ours.resetCache();
        return ours.generate(p, { maxNewTokens: max, ignoreEos: true, speculativeTokens: spec });
      };
      const tjs = (max: number) => () => theirs.generate(p, max);
      const plainText = (await run(0, n)()).text;
      if ((await run(8, n)()).text === plainText) equal++;
      const one = await time(run(0, 1));
      const theirOne = await time(tjs(1));
      spent.plain += (await time(run(0, n))) - one;
      spent.spec += (await time(run(8, n))) - one;
      spent.theirs += (await time(tjs(n))) - theirOne;
    }
    const tps = (ms: number) => round(((n - 1) * codePrompts.length) / (ms / 1000), 1);
    code = {
      prompts: codePrompts.length,
      prompt_tokens_median: lengths.sort((a, b) => a - b)[Math.floor(lengths.length / 2)],
      new_tokens: n,
      ghostline_plain_tokens_per_s: tps(spent.plain),
      ghostline_speculative_tokens_per_s: tps(spent.spec),
      transformersjs_tokens_per_s: tps(spent.theirs),
      ratio_plain: round(spent.theirs / spent.plain, 3),
      ratio_speculative: round(spent.theirs / spent.spec, 3),
      speculative_equal_prompts: equal,
    };
  }
  await ours.dispose();
  await theirs.dispose();
  const g = rows.ours;
  const t = rows.theirs;
  return {
    model: path.basename(modelDir),
    onnx: path.basename(onnxFile),
    threads: opts.threads,
    prompt_tokens: promptIds.length,
    new_tokens: opts.newTokens,
    rounds: opts.rounds,
    ghostline: g,
    transformersjs: t,
    prefill_ratio: round(g.prefill_tokens_per_s / t.prefill_tokens_per_s, 3),
    decode_ratio: round(g.decode_tokens_per_s / t.decode_tokens_per_s, 3),
    code,
  };
}
