import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine } from '../src/engine/engine';
import { interleaved, type ThroughputRow } from './interleaved';
import { round } from './stats';

/** The part of node-llama-cpp's API used here (it is installed at bench time, outside package.json). */
interface NodeLlamaCpp {
  LlamaLogLevel: { error: unknown };
  getLlama(o: object): Promise<{
    loadModel(o: { modelPath: string }): Promise<{
      tokenize(text: string): number[];
      createContext(o: object): Promise<{
        getSequence(): { clearHistory(): Promise<void>; evaluate(tokens: number[], o: object): AsyncIterable<number> };
        dispose(): Promise<void>;
      }>;
      dispose(): Promise<void>;
    }>;
    dispose(): Promise<void>;
  }>;
}

export interface VsLlamaCppResult {
  model: string;
  gguf: string;
  threads: number;
  prompt_tokens: number;
  new_tokens: number;
  rounds: number;
  same_greedy_tokens: boolean;
  ghostline: ThroughputRow;
  llamacpp: ThroughputRow;
  prefill_ratio: number;
  decode_ratio: number;
}

/**
 * Ghostline's engine against llama.cpp (node-llama-cpp's prebuilt CPU binary) on the same weights (GGUF F32
 * from tools/model/export_gguf.py), the same thread count, interleaved; both start from the prompt text.
 * Prefill = a 1-token generation; decode rate = (N - 1) / (T(N) - T(1)), EOS ignored by counting tokens.
 */
export async function vsLlamaCpp(modelDir: string, gguf: string, benchDeps: string, opts: { threads: number; rounds: number; promptTokens: number; newTokens: number }): Promise<VsLlamaCppResult> {
  const entry = require.resolve('node-llama-cpp', { paths: [benchDeps] });
  const nlc = await (new Function('m', 'return import(m)')(pathToFileURL(entry).href) as Promise<NodeLlamaCpp>);
  const llama = await nlc.getLlama({ gpu: false, build: 'never', logLevel: nlc.LlamaLogLevel.error });
  const lmodel = await llama.loadModel({ modelPath: gguf });
  const ours = await Engine.load(modelDir, { threads: opts.threads });
  const ctxSize = Math.min(ours.info.contextLength, 2048);
  const lctx = await lmodel.createContext({ contextSize: ctxSize, threads: opts.threads, batchSize: ctxSize });
  const seq = lctx.getSequence();
  const ids = ours.tokenize('const x = 1;\n'.repeat(Math.ceil(opts.promptTokens / 4) + 8)).slice(0, opts.promptTokens);
  const prompt = ours.tokenizer.decode(ids);

  const theirTokens: number[] = [];
  const runTheirs = async (n: number) => {
    await seq.clearHistory();
    theirTokens.length = 0;
    for await (const t of seq.evaluate(lmodel.tokenize(prompt), { temperature: 0 })) {
      theirTokens.push(t);
      if (theirTokens.length >= n) break;
    }
  };
  const promptTokens = ours.tokenize(prompt).length;
  const rows = await interleaved(
    async (n) => {
      ours.resetCache();
      await ours.generate(prompt, { maxNewTokens: n, ignoreEos: true });
    },
    runTheirs,
    { ...opts, promptTokens },
  );
  // Same weights, same greedy path: the first tokens agree when both tokenizers split the prompt alike.
  const mine = await ours.generate(prompt, { maxNewTokens: 8, ignoreEos: true });
  await runTheirs(8);
  const same = mine.tokens.every((t, i) => t === theirTokens[i]);
  await ours.dispose();
  await lctx.dispose();
  await lmodel.dispose();
  await llama.dispose();
  const g = rows.ours;
  const l = rows.theirs;
  return {
    model: path.basename(modelDir),
    gguf: path.basename(gguf),
    threads: opts.threads,
    prompt_tokens: promptTokens,
    new_tokens: opts.newTokens,
    rounds: opts.rounds,
    same_greedy_tokens: same,
    ghostline: g,
    llamacpp: l,
    prefill_ratio: round(g.prefill_tokens_per_s / l.prefill_tokens_per_s, 3),
    decode_ratio: round(g.decode_tokens_per_s / l.decode_tokens_per_s, 3),
  };
}
