// The Qwen2.5-Coder-0.5B path of issue 12: a random-weight Hugging Face checkpoint of that exact shape (bf16
// safetensors), converted by `ghostline convert --quant q4` (timed, peak RSS), then Ghostline's engine on the
// converted graph against llama.cpp on a Q4_0 GGUF of the same checkpoint (the same 4-bit codes) and
// transformers.js on torch.onnx's q4 graph of the same weights, interleaved; bandwidth and the typing replay
// on the converted graph. bench/README.md explains every number.
import { pythonTool } from './pythonTool';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Engine } from '../src/engine/worker/engine';
import { interleavedMany, type Generation, type ThroughputRow, type TokenTimes } from './interleaved';
import { openLlamaCpp, syntheticPrompt } from './llamaCpp';
import { onnxWeightBytesPerToken, type OnnxWeightBytes } from './onnxWeights';
import { round } from './stats';
import { openTransformersJs } from './transformersJs';
import { typingReplay, type TypingReplayResult } from './typingReplay';

/** Generated models and GGUFs (never committed), shared by the bench's runs. */
export const BENCH_CACHE = path.join(os.tmpdir(), 'ghostline-bench');
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'; // Debian's numpy / torch
const SEED = 0;

export interface QwenPathOptions {
  root: string;
  threads: number;
  /** Interleaved rounds at each prompt length (same order as promptTokens). */
  rounds: number[];
  newTokens: number;
  /** Prompt lengths in tokens: the first and the last get the llama.cpp keys; transformers.js runs at the last. */
  promptTokens: number[];
  workerPath: string;
  replayFiles: string[];
  /** Read bandwidth (bytes/s) with `threads` threads (bench/bandwidth.ts). */
  readBandwidth: number;
  /** node-llama-cpp's install folder (.bench-deps), or null to skip llama.cpp. */
  benchDeps: string | null;
  /** A folder with torch.onnx's graph of the same checkpoint (onnx/model_q4.onnx), or null to skip transformers.js. */
  torchDir: string | null;
  /** A Hugging Face checkpoint folder to use instead of the generated one. */
  checkpoint?: string;
  log: (s: string) => void;
}

export interface ConvertRun {
  seconds: number;
  peak_rss_mb: number;
  /** How peak RSS was read: VmHWM of /proc/self/status at exit, else getrusage's ru_maxrss. */
  peak_rss_source: string;
  output_mb: number;
  peak_rss_over_output: number;
  converter_seconds: number | null;
  command: string;
}

export interface LengthRun {
  prompt_tokens: Record<string, number>;
  new_tokens: number;
  rounds: number;
  rows: Record<string, ThroughputRow>;
  decode_ratio_vs_llamacpp: number | null;
  prefill_ratio_vs_llamacpp: number | null;
  decode_ratio_vs_transformersjs: number | null;
  prefill_ratio_vs_transformersjs: number | null;
}

export interface QwenPathResult {
  checkpoint: string;
  converted: string;
  gguf: string | null;
  torch_onnx: string | null;
  threads: number;
  convert: ConvertRun;
  /** export_gguf.py --compare-codes: the GGUF's Q4_0 codes and scales against the converted graph's. */
  same_q4_codes: Record<string, unknown> | null;
  /** Whether llama.cpp's own tokenization of the prompt equals Ghostline's (it gets Ghostline's ids either way). */
  same_prompt_tokens: boolean | null;
  /** Greedy tokens from the short prompt that Ghostline and llama.cpp agree on before they part (16 asked). */
  greedy_agreement_tokens: number | null;
  by_length: Record<string, LengthRun>;
  weight_bytes_per_token: OnnxWeightBytes;
  fraction_of_bandwidth_limit: number;
  fraction_of_bandwidth_limit_prompt_tokens: number;
  typing: TypingReplayResult;
  /** os.loadavg() when the throughput runs began and ended (2-core machines are shared: read the numbers with it). */
  loadavg: { before: number[]; after: number[] };
  errors: string[];
}

/** The random-weight checkpoint of Qwen2.5-Coder-0.5B's shape (tools/model/make_random_checkpoint.py), made once. */
export function ensureQwenCheckpoint(
  root: string,
  log: (s: string) => void,
  shape: 'qwen2.5-coder-0.5b' | 'qwen2.5-coder-1.5b' = 'qwen2.5-coder-0.5b',
): string {
  const dir = path.join(BENCH_CACHE, `${shape === 'qwen2.5-coder-0.5b' ? 'qwen05b' : 'qwen15b'}-checkpoint-seed${SEED}`);
  const script = path.join(root, 'tools', 'model', 'make_random_checkpoint.py');
  const st = path.join(dir, 'model.safetensors');
  if (fs.existsSync(st) && fs.existsSync(path.join(dir, 'config.json')) && fs.statSync(st).mtimeMs > fs.statSync(script).mtimeMs) return dir;
  log(`generating ${dir}`);
  fs.mkdirSync(BENCH_CACHE, { recursive: true });
  run(PYTHON, pythonTool(root, script, ['--out', dir, '--shape', shape, '--seed', String(SEED)]), 'make_random_checkpoint.py');
  return dir;
}

/** The random-weight shapes the speed benches run on, by their `--shapes` names. */
export const QWEN_SHAPES = { '0.5b': 'qwen2.5-coder-0.5b', '1.5b': 'qwen2.5-coder-1.5b' } as const;
export type QwenShapeName = keyof typeof QWEN_SHAPES;

/** A bench's `--shapes a,b` value as shape names (default: both; unknown names are dropped). */
export function shapesArg(value: string | undefined): QwenShapeName[] {
  return (value ?? '0.5b,1.5b').split(',').filter((s): s is QwenShapeName => s in QWEN_SHAPES);
}

/** A shape's checkpoint and its converted q4 folder, each made once in the bench cache (`convertS`: converted now). */
export function ensureConvertedShape(
  root: string,
  log: (s: string) => void,
  shape: QwenShapeName,
): { checkpoint: string; converted: string; convertS?: number } {
  const checkpoint = ensureQwenCheckpoint(root, log, QWEN_SHAPES[shape]);
  const converted = path.join(BENCH_CACHE, `${path.basename(checkpoint)}-converted-q4`);
  if (fs.existsSync(path.join(converted, 'config.json'))) return { checkpoint, converted };
  log(`convert ${checkpoint}`);
  return { checkpoint, converted, convertS: convertTimed(root, checkpoint, converted).seconds };
}

/** llama.cpp's Q4_0 GGUF of the checkpoint (tools/model/export_gguf.py --q4_0), remade when older than its inputs. */
export function ensureQ4Gguf(root: string, checkpoint: string, log: (s: string) => void): string {
  const out = path.join(BENCH_CACHE, `${path.basename(path.resolve(checkpoint))}-q4_0.gguf`);
  const script = path.join(root, 'tools', 'model', 'export_gguf.py');
  const inputs = [
    script,
    path.join(root, 'tools', 'model', 'safetensors_io.py'),
    path.join(checkpoint, 'config.json'),
    path.join(checkpoint, 'tokenizer.json'),
  ].concat(
    fs
      .readdirSync(checkpoint)
      .filter((f) => f.endsWith('.safetensors'))
      .map((f) => path.join(checkpoint, f)),
  );
  if (fs.existsSync(out) && inputs.every((f) => fs.statSync(out).mtimeMs > fs.statSync(f).mtimeMs)) return out;
  log(`exporting ${out}`);
  run(PYTHON, pythonTool(root, script, [checkpoint, out, '--q4_0']), 'export_gguf.py');
  return out;
}

// Loaded with --require into the converter's process: its peak RSS at exit, into the file named by the env.
const PEAK_RSS_PRELOAD = `'use strict';
process.on('exit', () => {
  let kb = null, source = 'getrusage ru_maxrss';
  try {
    const m = /VmHWM:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'));
    if (m) { kb = Number(m[1]); source = '/proc/self/status VmHWM'; }
  } catch {}
  if (kb === null) kb = process.resourceUsage().maxRSS;
  require('fs').writeFileSync(process.env.GHOSTLINE_PEAK_RSS_FILE, JSON.stringify({ kb, source }));
});
`;

/**
 * `node dist/cli.js convert --from CHECKPOINT --out OUT --quant q4` in a child process, as the extension runs
 * it: wall seconds (process start included) and the child's peak RSS.
 */
export function convertTimed(root: string, checkpoint: string, out: string): ConvertRun {
  const cli = path.join(root, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run node esbuild.js`);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(BENCH_CACHE, { recursive: true });
  const preload = path.join(BENCH_CACHE, 'peak-rss-preload.cjs');
  fs.writeFileSync(preload, PEAK_RSS_PRELOAD);
  const rssFile = path.join(BENCH_CACHE, `peak-rss-${process.pid}.json`);
  fs.rmSync(rssFile, { force: true });
  const args = ['--require', preload, cli, 'convert', '--from', checkpoint, '--out', out, '--quant', 'q4', '--progress-json'];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env: { ...process.env, GHOSTLINE_PEAK_RSS_FILE: rssFile }, encoding: 'utf8', maxBuffer: 64 << 20 });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`ghostline convert failed (exit ${r.status}): ${(r.stderr || r.stdout || '').slice(-2000)}`);
  const peak = JSON.parse(fs.readFileSync(rssFile, 'utf8')) as { kb: number; source: string };
  fs.rmSync(rssFile, { force: true });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  let converterSeconds: number | null = null;
  let bytes = 0;
  try {
    const result = (JSON.parse(last) as { result?: { seconds: number; bytes: number } }).result;
    converterSeconds = result ? round(result.seconds, 2) : null;
    bytes = result?.bytes ?? 0;
  } catch {
    // an older CLI without --progress-json: measure the folder instead
  }
  if (!bytes) bytes = folderBytes(out);
  const peakMb = (peak.kb * 1024) / 1e6;
  return {
    seconds: round(seconds, 2),
    peak_rss_mb: Math.round(peakMb),
    peak_rss_source: peak.source,
    output_mb: Math.round(bytes / 1e6),
    peak_rss_over_output: round((peak.kb * 1024) / bytes, 2),
    converter_seconds: converterSeconds,
    command: `node dist/cli.js ${args.slice(3).join(' ')}`,
  };
}

export async function qwenPath(o: QwenPathOptions): Promise<QwenPathResult> {
  const errors: string[] = [];
  const checkpoint = o.checkpoint ?? ensureQwenCheckpoint(o.root, o.log);
  const converted = path.join(BENCH_CACHE, `${path.basename(path.resolve(checkpoint))}-converted-q4`);
  o.log(`convert ${checkpoint} -> ${converted}`);
  const convert = convertTimed(o.root, checkpoint, converted);
  o.log(`converted in ${convert.seconds} s, peak RSS ${convert.peak_rss_mb} MB`);
  const onnxFile = path.join(converted, 'onnx', 'model_q4.onnx');

  let gguf: string | null = null;
  let sameCodes: Record<string, unknown> | null = null;
  if (o.benchDeps) {
    try {
      gguf = ensureQ4Gguf(o.root, checkpoint, o.log);
      o.log('comparing the GGUF Q4_0 codes with the converted graph');
      const tool = pythonTool(o.root, 'export_gguf.py', ['--compare-codes', gguf, onnxFile], { OMP_NUM_THREADS: '1' });
      const r = spawnSync(PYTHON, tool.args, { encoding: 'utf8', env: tool.env });
      sameCodes =
        r.status === 0 ? JSON.parse(r.stdout.trim().split('\n').pop() as string) : { codes_equal: false, error: (r.stderr || r.stdout).trim().slice(-500) };
    } catch (err) {
      errors.push(`llama.cpp side: ${(err as Error).message}`);
      gguf = null;
    }
  }

  // Throughput: the engines loaded once, interleaved round by round at each prompt length.
  const ours = await Engine.load(converted, { threads: o.threads });
  const contextSize = 2048;
  const llama =
    gguf && o.benchDeps
      ? await openLlamaCpp(gguf, o.benchDeps, { threads: o.threads, contextSize }).catch((err: Error) => {
          errors.push(`llama.cpp: ${err.message}`);
          return null;
        })
      : null;
  const torchOnnx = o.torchDir ? path.join(o.torchDir, 'onnx', 'model_q4.onnx') : null;
  const tjs =
    torchOnnx && fs.existsSync(torchOnnx)
      ? await openTransformersJs(o.torchDir as string, torchOnnx, o.threads).catch((err: Error) => {
          errors.push(`transformers.js: ${err.message}`);
          return null;
        })
      : null;
  const byLength: Record<string, LengthRun> = {};
  const loadBefore = os.loadavg().map((x) => round(x));
  let samePromptTokens: boolean | null = null;
  let agreement: number | null = null;
  const longest = o.promptTokens[o.promptTokens.length - 1];
  for (const [li, len] of o.promptTokens.entries()) {
    const rounds = o.rounds[li] ?? o.rounds[o.rounds.length - 1];
    const prompt = syntheticPrompt(ours.tokenizer, len);
    const ids = ours.tokenize(prompt);
    if (ids.length + o.newTokens > Math.min(ours.info.contextLength, contextSize)) throw new Error(`a ${ids.length}-token prompt does not fit the context`);
    const engines: Record<string, Generation> = {
      ghostline: async (n): Promise<TokenTimes> => {
        ours.resetCache(); // cold, as the others are
        const r = await ours.generate(prompt, { maxNewTokens: n, ignoreEos: true, speculativeTokens: 0 });
        // The engine's own clock: the first token is chosen when prefill ends, the last at the end of the run.
        return { tokens: r.stats.generatedTokens, firstTokenAt: r.stats.prefillMs, lastTokenAt: r.stats.totalMs };
      },
    };
    const counts: Record<string, number> = { ghostline: ids.length };
    if (llama) {
      // Ghostline's token ids (see vsLlamaCpp): the same sequence for both, tokenization left out of llama.cpp's time.
      engines.llamacpp = (n) => llama.generate(ids, n);
      counts.llamacpp = ids.length;
      if (len === o.promptTokens[0]) {
        const theirIds = llama.tokenize(prompt);
        samePromptTokens = theirIds.length === ids.length && theirIds.every((t, i) => t === ids[i]);
        const mine = (await ours.generate(prompt, { maxNewTokens: 16, ignoreEos: true, speculativeTokens: 0 })).tokens;
        const theirs = (await llama.generate(ids, 16)).ids;
        agreement = 0;
        while (agreement < mine.length && mine[agreement] === theirs[agreement]) agreement++;
      }
    }
    if (tjs && len === longest) {
      engines.transformersjs = (n) => tjs.generate(prompt, n);
      counts.transformersjs = ids.length; // the same tokenizer.json
    }
    o.log(`qwen05b throughput, ${ids.length}-token prompt: ${Object.keys(engines).join(', ')}, ${rounds} rounds`);
    const rows = await interleavedMany(engines, { rounds, promptTokens: counts, newTokens: o.newTokens });
    const ratio = (key: 'decode_tokens_per_s' | 'prefill_tokens_per_s', other: string) =>
      rows[other] ? round(rows.ghostline[key] / rows[other][key], 3) : null;
    byLength[String(len)] = {
      prompt_tokens: counts,
      new_tokens: o.newTokens,
      rounds,
      rows,
      decode_ratio_vs_llamacpp: ratio('decode_tokens_per_s', 'llamacpp'),
      prefill_ratio_vs_llamacpp: ratio('prefill_tokens_per_s', 'llamacpp'),
      decode_ratio_vs_transformersjs: ratio('decode_tokens_per_s', 'transformersjs'),
      prefill_ratio_vs_transformersjs: ratio('prefill_tokens_per_s', 'transformersjs'),
    };
  }
  const loadAfter = os.loadavg().map((x) => round(x));
  await ours.dispose();
  await llama?.dispose();
  await tjs?.dispose();

  // Bandwidth: decode at the shortest prompt (weights dominate; the KV cache is small there).
  const weights = onnxWeightBytesPerToken(onnxFile);
  const shortest = byLength[String(o.promptTokens[0])].rows.ghostline.decode_tokens_per_s;
  const fraction = round((shortest * weights.perToken) / o.readBandwidth, 3);

  o.log('qwen05b typing replay on the converted graph');
  // Random weights: fixed 12-token suggestions, prompt lookup off (its acceptance would say nothing).
  const typing = await typingReplay(o.workerPath, converted, o.replayFiles, {
    threads: o.threads,
    charsPerFile: 200,
    gapMs: 150,
    pauseMs: 5000,
    fixedNewTokens: 12,
    speculativeTokens: 0,
  });

  return {
    checkpoint,
    converted,
    gguf,
    torch_onnx: tjs ? torchOnnx : null,
    threads: o.threads,
    convert,
    same_q4_codes: sameCodes,
    same_prompt_tokens: samePromptTokens,
    greedy_agreement_tokens: agreement,
    by_length: byLength,
    weight_bytes_per_token: weights,
    fraction_of_bandwidth_limit: fraction,
    fraction_of_bandwidth_limit_prompt_tokens: o.promptTokens[0],
    typing,
    loadavg: { before: loadBefore, after: loadAfter },
    errors,
  };
}

function run(cmd: string, tool: { args: string[]; env: NodeJS.ProcessEnv }, what: string): void {
  // The child's output goes to stderr with the bench's log: stdout carries the results JSON.
  const r = spawnSync(cmd, tool.args, { stdio: ['ignore', 2, 2], env: { OMP_NUM_THREADS: '2', ...tool.env } });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status})`);
}

function folderBytes(dir: string): number {
  let sum = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    sum += e.isDirectory() ? folderBytes(p) : fs.statSync(p).size;
  }
  return sum;
}
