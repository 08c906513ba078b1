import { pythonTool } from './pythonTool';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../src/engine/worker/engine';
import { interleaved, type ThroughputRow, type TokenTimes } from './interleaved';
import { syntheticPrompt } from './llamaCpp';
import { round } from './stats';

export type { ThroughputRow };

export interface VsTransformersResult {
  model: string;
  /** Ghostline's ONNX file (in `model`). */
  onnx: string;
  /** The ONNX file transformers.js ran: `onnx` itself, or a Hugging Face-contract export of the same weights. */
  transformersjs_onnx: string;
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
  /** Prompts that transformers.js tokenized into the same ids as Ghostline. */
  transformersjs_same_prompt_tokens: number;
  /**
   * Prompts whose N greedy tokens were the same in transformers.js as in Ghostline without prompt lookup (up to
   * Ghostline's first EOS, which transformers.js's min_new_tokens masks). With two graphs of the same weights
   * (an export for transformers.js, the shipped lean graph for Ghostline) they can part at a quantization near-tie.
   */
  transformersjs_equal_prompts: number;
  /** Per prompt: the index of the first new token where the two differ, null where they agree. */
  transformersjs_first_difference: (number | null)[];
}

/** A model loaded in @huggingface/transformers (onnxruntime-node underneath), greedy generation from text. */
export interface TransformersJsSession {
  /** Greedy, cold (transformers.js keeps no cache between calls): tokenizes `prompt`, then exactly `n` new tokens. */
  generate(prompt: string, n: number): Promise<TokenTimes & { promptIds: number[]; ids: number[] }>;
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
      // A streamer (duck-typed): put() gets the prompt ids first, then each new token as it is chosen ([[id]]).
      // (The prompt's array grows with the generated ids afterwards: copied at once.)
      const times: number[] = [];
      let promptIds: number[] | null = null;
      const ids: number[] = [];
      const put = (v: bigint[][]) => {
        times.push(performance.now());
        if (promptIds) ids.push(Number(v[0][0]));
        else promptIds = v[0].map(Number);
      };
      const streamer = { put, end: () => undefined };
      await model.generate({ ...enc, max_new_tokens: n, min_new_tokens: n, do_sample: false, streamer } as Record<string, unknown>);
      const tokens = times.slice(1);
      return { tokens: tokens.length, firstTokenAt: tokens[0] ?? 0, lastTokenAt: tokens[tokens.length - 1] ?? 0, promptIds: promptIds ?? [], ids };
    },
    dispose: () => (model as unknown as { dispose(): Promise<void> }).dispose(),
  };
}

/**
 * Ghostline's engine against @huggingface/transformers, the same thread count, in the same process,
 * interleaved round by round, both from the prompt text (tokenization included). transformers.js runs
 * `opts.theirs` when given (a Hugging Face-contract export of the same weights: ensureHfExport), else the same
 * ONNX file as Ghostline. Both measured the same way: wall time of a generation of 1 token (prefill) and of N
 * tokens with EOS ignored; decode rate = (N - 1) / (T(N) - T(1)).
 */
export async function vsTransformersJs(
  modelDir: string,
  onnxFile: string,
  opts: { threads: number; rounds: number; promptTokens: number; newTokens: number; codePrompts?: string[]; theirs?: { dir: string; onnx: string } },
): Promise<VsTransformersResult> {
  const theirDir = opts.theirs?.dir ?? modelDir;
  const theirOnnx = opts.theirs?.onnx ?? onnxFile;
  const theirs = await openTransformersJs(theirDir, theirOnnx, opts.threads);
  const ours = await Engine.load(modelDir, { threads: opts.threads, onnxFile: path.basename(onnxFile) });
  const prompt = syntheticPrompt(ours.tokenizer, opts.promptTokens);
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
    const timed = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
      const t0 = performance.now();
      const value = await f();
      return [performance.now() - t0, value];
    };
    const time = async (f: () => Promise<unknown>) => (await timed(f))[0];
    const n = opts.newTokens;
    const spent = { plain: 0, spec: 0, theirs: 0 };
    const eos = new Set(ours.info.eosIds);
    let equal = 0;
    let samePrompt = 0;
    const firstDifference: (number | null)[] = [];
    const lengths: number[] = [];
    for (const full of codePrompts) {
      // The end of the prompt, at most promptTokens tokens (transformers.js does not fit prompts to the context).
      const fullIds = ours.tokenize(full);
      const p = fullIds.length > opts.promptTokens ? ours.tokenizer.decode(fullIds.slice(-opts.promptTokens)) : full;
      const ids = ours.tokenize(p);
      lengths.push(ids.length);
      const run = (spec: number, max: number) => async () => {
        ours.resetCache();
        return ours.generate(p, { maxNewTokens: max, ignoreEos: true, speculativeTokens: spec });
      };
      const tjs = (max: number) => () => theirs.generate(p, max);
      const plain = await run(0, n)();
      if ((await run(8, n)()).text === plain.text) equal++;
      const one = await time(run(0, 1));
      const theirOne = await time(tjs(1));
      spent.plain += (await time(run(0, n))) - one;
      spent.spec += (await time(run(8, n))) - one;
      const [theirN, their] = await timed(tjs(n));
      spent.theirs += theirN - theirOne;
      // Greedy agreement, reported (not required): up to Ghostline's first EOS (transformers.js masks EOS).
      if (their.promptIds.length === ids.length && their.promptIds.every((t, i) => t === ids[i])) samePrompt++;
      const stop = plain.tokens.findIndex((t) => eos.has(t));
      const upTo = stop < 0 ? plain.tokens.length : stop;
      let k = 0;
      while (k < upTo && plain.tokens[k] === their.ids[k]) k++;
      firstDifference.push(k === upTo ? null : k);
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
      transformersjs_same_prompt_tokens: samePrompt,
      transformersjs_equal_prompts: firstDifference.filter((d) => d === null).length,
      transformersjs_first_difference: firstDifference,
    };
  }
  await ours.dispose();
  await theirs.dispose();
  const g = rows.ours;
  const t = rows.theirs;
  return {
    model: path.basename(modelDir),
    onnx: path.basename(onnxFile),
    transformersjs_onnx: opts.theirs ? theirOnnx : path.basename(onnxFile),
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

/** A Hugging Face-contract export for transformers.js (ensureHfExport). */
export interface HfExport {
  dir: string;
  onnx: string;
  /** How it was made (recorded in the results). */
  made_by: string;
}

const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'; // Debian's numpy / torch

/**
 * transformers.js runs only the Hugging Face / Optimum decoder contract (past_key_values.*). For a model folder
 * shipped as the converter's lean graph (config.json `ghostline.graph`), what a user gets from a standard export
 * of the same weights: torch.onnx's graph of the folder's model.safetensors (tools/model/make_random_model.py
 * --from-checkpoint, export_onnx.py's contract, fp32), quantized to the shipped precision (config.json
 * `ghostline.converted`: int8 -> tools/model/quantize.py, MatMulNBits 8-bit with zero points and an int8
 * embedding table; q4 -> quantize_q4.py, symmetric 4-bit; the same block size and accuracy level), in
 * `cacheDir` (never committed), remade when older than any of its inputs. Null when the folder's graph is
 * already that contract: transformers.js then runs the shipped file.
 */
export function ensureHfExport(root: string, modelDir: string, cacheDir: string, log: (s: string) => void): HfExport | null {
  const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as {
    ghostline?: { graph?: string; converted?: { quant?: string; block_size?: number; accuracy_level?: number } };
  };
  if (!config.ghostline?.graph) return null;
  const st = path.join(modelDir, 'model.safetensors');
  if (!fs.existsSync(st)) throw new Error(`${modelDir} is a lean graph without model.safetensors: no export of its weights for transformers.js`);
  const conv = config.ghostline.converted ?? {};
  const quant = conv.quant ?? 'fp32';
  const block = conv.block_size ?? 32;
  const level = conv.accuracy_level ?? 0;
  const tools = path.join(root, 'tools', 'model');
  const steps: { file: string; script?: string; args: (src: string, dst: string) => string[] } = (() => {
    switch (quant) {
      case 'int8':
        return {
          file: 'model_int8.onnx',
          script: 'quantize.py',
          args: (src, dst) => [src, dst, '--bits', '8', '--block', String(block), '--accuracy-level', String(level)],
        };
      case 'q4':
        return { file: 'model_q4.onnx', script: 'quantize_q4.py', args: (src, dst) => [src, dst, '--block', String(block), '--accuracy-level', String(level)] };
      case 'fp32':
        return { file: 'model.onnx', args: () => [] };
      default:
        throw new Error(`${modelDir}: config.json ghostline.converted.quant ${quant} is not known here`);
    }
  })();
  const name = `${path.basename(path.resolve(modelDir))}-hf-${quant}${quant === 'fp32' ? '' : `-b${block}-acc${level}`}`;
  const dir = path.join(cacheDir, name);
  const onnx = path.join(dir, 'onnx', steps.file);
  const scripts = [
    '__init__.py',
    'make_random_model.py',
    'make_random_checkpoint.py',
    'export_onnx.py',
    'llama.py',
    'safetensors_io.py',
    'quantize.py',
    'quantize_q4.py',
  ];
  const inputs = [
    st,
    path.join(modelDir, 'config.json'),
    path.join(modelDir, 'tokenizer.json'),
    path.join(modelDir, 'tokenizer_config.json'),
    ...scripts.map((f) => path.join(tools, f)),
  ];
  const madeBy = [
    `make_random_model.py --from-checkpoint ${modelDir} --no-q4`,
    ...(steps.script ? [`${steps.script} ${steps.args('model.onnx', steps.file).join(' ')}`] : []),
  ].join(' && ');
  if (fs.existsSync(onnx) && inputs.every((f) => !fs.existsSync(f) || fs.statSync(onnx).mtimeMs > fs.statSync(f).mtimeMs))
    return { dir, onnx, made_by: madeBy };
  log(`exporting ${dir} for transformers.js (${madeBy})`);
  const scratch = `${dir}.partial-${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(cacheDir, { recursive: true });
  // The children's output goes to stderr with the bench's log: stdout carries the results JSON.
  const python = (script: string, args: string[], what: string) => {
    const tool = pythonTool(root, script, args, { OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? '1' });
    const r = spawnSync(PYTHON, tool.args, { stdio: ['ignore', 2, 2], env: tool.env });
    if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status})`);
  };
  try {
    python('make_random_model.py', ['--out', scratch, '--from-checkpoint', modelDir, '--no-q4'], 'make_random_model.py');
    if (steps.script) {
      const fp32 = path.join(scratch, 'onnx', 'model.onnx');
      python(steps.script, steps.args(fp32, path.join(scratch, 'onnx', steps.file)), steps.script);
      for (const f of ['model.onnx', 'model.onnx_data']) fs.rmSync(path.join(scratch, 'onnx', f), { force: true }); // transformers.js loads only steps.file
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(scratch, dir);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return { dir, onnx, made_by: madeBy };
}
