import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine } from '../src/engine/worker/engine';
import type { TextTokenizer } from '../src/engine/model/tokenizer';
import { interleaved, type ThroughputRow, type TokenTimes } from './interleaved';
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

/** New token ids and when the first and the last came out. */
export interface GeneratedTokens extends TokenTimes {
  ids: number[];
}

/** A GGUF loaded in llama.cpp (node-llama-cpp's prebuilt CPU binary), one context, one sequence. */
export interface LlamaCppSession {
  readonly contextSize: number;
  tokenize(text: string): number[];
  /** Greedy, from an empty KV cache: the prompt (text, tokenized by llama.cpp; or token ids), then `n` new tokens (EOS ignored by counting tokens). */
  generate(prompt: string | number[], n: number): Promise<GeneratedTokens>;
  dispose(): Promise<void>;
}

export async function openLlamaCpp(gguf: string, benchDeps: string, opts: { threads: number; contextSize: number }): Promise<LlamaCppSession> {
  const entry = require.resolve('node-llama-cpp', { paths: [benchDeps] });
  const nlc = await (new Function('m', 'return import(m)')(pathToFileURL(entry).href) as Promise<NodeLlamaCpp>);
  const llama = await nlc.getLlama({ gpu: false, build: 'never', logLevel: nlc.LlamaLogLevel.error });
  const lmodel = await llama.loadModel({ modelPath: gguf });
  const lctx = await lmodel.createContext({ contextSize: opts.contextSize, threads: opts.threads, batchSize: opts.contextSize });
  const seq = lctx.getSequence();
  return {
    contextSize: opts.contextSize,
    tokenize: (text) => lmodel.tokenize(text),
    async generate(prompt, n) {
      await seq.clearHistory();
      const ids: number[] = [];
      let firstTokenAt = 0;
      let lastTokenAt = 0;
      // The generator evaluates a token only when asked for the next one: breaking after the Nth leaves N - 1 steps.
      for await (const t of seq.evaluate(typeof prompt === 'string' ? lmodel.tokenize(prompt) : prompt, { temperature: 0 })) {
        lastTokenAt = performance.now();
        if (ids.length === 0) firstTokenAt = lastTokenAt;
        ids.push(t);
        if (ids.length >= n) break;
      }
      return { ids, tokens: ids.length, firstTokenAt, lastTokenAt };
    },
    async dispose() {
      await lctx.dispose();
      await lmodel.dispose();
      await llama.dispose();
    },
  };
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

/** A prompt of about `tokens` tokens of a model's tokenizer (a repeated line), as text. */
export function syntheticPrompt(tokenizer: Pick<TextTokenizer, 'encodePrompt' | 'decode'>, tokens: number): string {
  const ids = tokenizer.encodePrompt('const x = 1;\n'.repeat(Math.ceil(tokens / 4) + 8)).slice(0, tokens);
  return tokenizer.decode(ids);
}

/**
 * Ghostline's engine against llama.cpp (node-llama-cpp's prebuilt CPU binary) on the same weights (GGUF from
 * tools/model/export_gguf.py), the same thread count, interleaved. Ghostline starts from the prompt text;
 * llama.cpp gets Ghostline's token ids of it: a GGUF cannot carry Ghostline's pre-tokenizer regex, and
 * llama.cpp's own split makes other tokens (409 instead of 256 for the synthetic prompt), so it would prefill a
 * longer prompt. Leaving its tokenization out of its time favours llama.cpp by well under a millisecond.
 * Prefill = a 1-token generation; decode rate = (N - 1) / (T(N) - T(1)), EOS ignored by counting tokens.
 */
export async function vsLlamaCpp(
  modelDir: string,
  gguf: string,
  benchDeps: string,
  opts: { threads: number; rounds: number; promptTokens: number; newTokens: number },
): Promise<VsLlamaCppResult> {
  const ours = await Engine.load(modelDir, { threads: opts.threads });
  const theirs = await openLlamaCpp(gguf, benchDeps, { threads: opts.threads, contextSize: Math.min(ours.info.contextLength, 2048) });
  const prompt = syntheticPrompt(ours.tokenizer, opts.promptTokens);
  const ids = ours.tokenize(prompt);
  const promptTokens = ids.length;
  const rows = await interleaved(
    async (n) => {
      ours.resetCache();
      await ours.generate(prompt, { maxNewTokens: n, ignoreEos: true });
    },
    async (n) => {
      await theirs.generate(ids, n);
    },
    { ...opts, promptTokens },
  );
  // Same weights, same tokens in, same greedy path: the first tokens agree (up to rounding near-ties).
  const mine = await ours.generate(prompt, { maxNewTokens: 8, ignoreEos: true });
  const theirTokens = (await theirs.generate(ids, 8)).ids;
  const same = mine.tokens.every((t, i) => t === theirTokens[i]);
  await ours.dispose();
  await theirs.dispose();
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

/** node-llama-cpp 3.22.1 and its CPU build, installed once into .bench-deps (from the npm registry). */
export function ensureNodeLlamaCpp(root: string): string {
  const dir = path.join(root, '.bench-deps');
  if (!fs.existsSync(path.join(dir, 'node_modules', 'node-llama-cpp'))) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"ghostline-bench-deps","private":true}\n');
    const platform = `@node-llama-cpp/${process.platform === 'darwin' ? 'mac' : process.platform}-${process.arch}@3.22.1`;
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--omit=optional', 'node-llama-cpp@3.22.1', platform], {
      cwd: dir,
      stdio: ['ignore', 2, 2],
    });
    if (r.status !== 0) throw new Error('npm install node-llama-cpp failed');
  }
  return dir;
}
