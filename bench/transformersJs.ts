import * as path from 'node:path';
import { Engine } from '../src/engine/engine';
import { interleaved, type ThroughputRow } from './interleaved';
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
}

/**
 * Ghostline's engine against @huggingface/transformers on the same ONNX file, the same thread count, in the
 * same process, interleaved round by round, both from the prompt text (tokenization included). Both measured
 * the same way: wall time of a generation of 1
 * token (prefill) and of N tokens with EOS ignored; decode rate = (N - 1) / (T(N) - T(1)).
 */
export async function vsTransformersJs(modelDir: string, onnxFile: string, opts: { threads: number; rounds: number; promptTokens: number; newTokens: number }): Promise<VsTransformersResult> {
  // transformers.js is ESM-only: a real dynamic import (tsc would turn import() into require()).
  const tjs = (await new Function('m', 'return import(m)')('@huggingface/transformers')) as typeof import('@huggingface/transformers');
  tjs.env.allowRemoteModels = false;
  tjs.env.localModelPath = path.dirname(modelDir) + path.sep;
  const id = path.basename(modelDir);
  const modelFileName = path.basename(onnxFile, '.onnx');
  const theirs = await tjs.AutoModelForCausalLM.from_pretrained(id, {
    dtype: 'fp32',
    device: 'cpu',
    model_file_name: modelFileName,
    session_options: { intraOpNumThreads: opts.threads, interOpNumThreads: 1 },
  } as Record<string, unknown>);
  const ours = await Engine.load(modelDir, { threads: opts.threads, onnxFile: path.basename(onnxFile) });
  const ids = ours.tokenize('const x = 1;\n'.repeat(Math.ceil(opts.promptTokens / 4) + 8)).slice(0, opts.promptTokens);
  const prompt = ours.tokenizer.decode(ids);
  const promptIds = ours.tokenize(prompt);
  const tokenizer = await tjs.AutoTokenizer.from_pretrained(id);

  const rows = await interleaved(
    async (n) => {
      ours.resetCache(); // cold, as transformers.js is on every call
      await ours.generate(prompt, { maxNewTokens: n, ignoreEos: true });
    },
    // Both sides start from the prompt text: tokenization is inside the timed region for both.
    async (n) => {
      const enc = tokenizer(prompt) as Record<string, unknown>;
      await theirs.generate({ ...enc, max_new_tokens: n, min_new_tokens: n, do_sample: false } as Record<string, unknown>);
    },
    { ...opts, promptTokens: promptIds.length },
  );
  await ours.dispose();
  await (theirs as unknown as { dispose(): Promise<void> }).dispose();
  const g = rows.ours;
  const t = rows.theirs;
  return {
    model: id,
    onnx: path.basename(onnxFile),
    threads: opts.threads,
    prompt_tokens: promptIds.length,
    new_tokens: opts.newTokens,
    rounds: opts.rounds,
    ghostline: g,
    transformersjs: t,
    prefill_ratio: round(g.prefill_tokens_per_s / t.prefill_tokens_per_s, 3),
    decode_ratio: round(g.decode_tokens_per_s / t.decode_tokens_per_s, 3),
  };
}
