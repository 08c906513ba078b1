// npm run bench [-- --quick] [--model DIR] [--qwen DIR] [--threads N]
// Writes bench/results/latest.json; bench/README.md explains every number.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultModelDir, packageRoot } from '../src/engine/defaultModel';
import { pickOnnxFile } from '../src/engine/modelFolder';
import { onnxWeightBytes } from '../src/engine/onnxModel';
import { measureCopyBandwidth } from './bandwidth';
import { engineBench } from './engineBench';
import { round } from './stats';
import { vsTransformersJs } from './transformersJs';
import { typingReplay } from './typingReplay';
import { vsLlamaCpp } from './llamaCpp';

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const root = packageRoot(__dirname);
  const model = arg('model') ?? defaultModelDir(root);
  const qwen = arg('qwen') ?? ensureQwenShape(root, quick);
  // Comparisons run both engines on the same explicit thread count; the typing replays use what a user
  // gets (the engine's automatic choice) unless --threads is given.
  const threads = Number(arg('threads') ?? 2);
  const replayThreads = arg('threads') ? threads : 0;
  const workerPath = path.join(root, 'dist', 'worker.js');
  const log = (s: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()}-${os.arch()}`,
    loadavg_at_start: os.loadavg().map((x) => round(x)),
  };

  log('memory bandwidth');
  const bandwidth = measureCopyBandwidth();

  log(`engine: ${model}`);
  const engine = await engineBench(model, path.join(root, 'src', 'completion', 'completionService.ts'), { threads, quick });

  const sources = [
    path.join(root, 'src', 'completion', 'completionService.ts'),
    path.join(root, 'src', 'engine', 'engine.ts'),
    require.resolve('semver/classes/range.js', { paths: [root] }),
    require.resolve('lru-cache', { paths: [root] }),
  ].filter((f) => fs.existsSync(f));
  const replayFiles = quick ? sources.slice(0, 2) : sources;
  log(`typing replay (default model, ${replayFiles.length} files)`);
  const replay = await typingReplay(workerPath, model, replayFiles, { threads: replayThreads, charsPerFile: quick ? 150 : 500, gapMs: 120, pauseMs: 1500 });

  log('vs transformers.js (default model)');
  const onnx = pickOnnxFile(model);
  const vsDefault = await vsTransformersJs(model, onnx, { threads, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32 });
  const weightBytes = onnxWeightBytes(onnx);
  const fractionDefault = (vsDefault.ghostline.decode_tokens_per_s * weightBytes) / bandwidth;

  log('vs llama.cpp (default model, same weights as GGUF)');
  let vsLlama: Awaited<ReturnType<typeof vsLlamaCpp>> | null = null;
  let vsLlama1: Awaited<ReturnType<typeof vsLlamaCpp>> | null = null;
  try {
    const deps = ensureNodeLlamaCpp(root);
    // Quantized ONNX (8/4-bit MatMulNBits) against llama.cpp's 8-bit Q8_0; fp32 against F32.
    const gguf = ensureGguf(root, model, arg('safetensors'), /int8|q4|quantized|uint8/.test(path.basename(onnx)));
    vsLlama = await vsLlamaCpp(model, gguf, deps, { threads, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32 });
    // One thread too: llama.cpp's worker threads spin-wait, which on a busy 2-core machine (an editor, a
    // build) costs it far more than onnxruntime with spinning off; one thread shows the kernels alone.
    if (threads > 1) vsLlama1 = await vsLlamaCpp(model, gguf, deps, { threads: 1, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32 });
  } catch (err) {
    log(`llama.cpp comparison skipped: ${(err as Error).message}`);
  }

  let qwenResult: Record<string, unknown> | null = null;
  if (qwen) {
    log(`qwen2.5-coder-0.5b shape: ${qwen}`);
    const qReplay = await typingReplay(workerPath, qwen, replayFiles.slice(0, 1), { threads: replayThreads, charsPerFile: quick ? 60 : 200, gapMs: 150, pauseMs: 5000, fixedNewTokens: 12 });
    const qOnnx = pickOnnxFile(qwen);
    const fp32 = path.join(path.dirname(qOnnx), 'model.onnx');
    const vsQwen = fs.existsSync(fp32) ? await vsTransformersJs(qwen, fp32, { threads, rounds: quick ? 2 : 3, promptTokens: 128, newTokens: 16 }) : null;
    const qBytes = onnxWeightBytes(fp32);
    qwenResult = {
      dir: qwen,
      onnx_for_latency: path.basename(qOnnx),
      typing: qReplay,
      vs_transformersjs_fp32: vsQwen,
      fraction_of_bandwidth_limit_fp32: vsQwen ? round((vsQwen.ghostline.decode_tokens_per_s * qBytes) / bandwidth, 3) : null,
    };
  }

  const results = {
    date: new Date().toISOString(),
    command: `npm run bench -- ${argv.join(' ')}`.trim(),
    machine,
    reuse: { median_prefill_fraction: replay.median_prefill_fraction },
    latency: {
      default: { p50_ms: replay.latency_ms.p50, p95_ms: replay.latency_ms.p95, p99_ms: replay.latency_ms.p99 },
      qwen05b: qwenResult ? { p50_ms: (qwenResult.typing as { latency_ms: { p50: number } }).latency_ms.p50, p95_ms: (qwenResult.typing as { latency_ms: { p95: number } }).latency_ms.p95 } : null,
    },
    throughput: {
      decode_ratio_vs_transformersjs: vsDefault.decode_ratio,
      prefill_ratio_vs_transformersjs: vsDefault.prefill_ratio,
      decode_ratio_vs_llamacpp: vsLlama?.decode_ratio ?? null,
      prefill_ratio_vs_llamacpp: vsLlama?.prefill_ratio ?? null,
    },
    bandwidth: {
      copy_gb_per_s: round(bandwidth / 1e9),
      weight_bytes_per_token: weightBytes,
      fraction_of_limit: round(fractionDefault, 3),
    },
    event_loop: { p99_lag_ms: replay.event_loop_p99_lag_ms },
    memory: { worker_rss_mb: replay.worker_rss_mb, host_rss_mb: replay.host_rss_mb },
    details: { engine, typing_default: replay, vs_transformersjs_default: vsDefault, vs_llamacpp_default: vsLlama, vs_llamacpp_default_1_thread: vsLlama1, qwen05b: qwenResult },
  };
  const out = path.join(root, 'bench', 'results', 'latest.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results, null, 2));
}

/**
 * The random-weight model with Qwen2.5-Coder-0.5B's exact shape, generated at bench time (never committed)
 * by tools/model/make_random_model.py with Debian's torch: fp32 plus MatMulNBits 4-bit (accuracy level 4,
 * int8 compute: 3-4x faster prefill on CPU than level 0). Skipped when torch is missing or with --quick.
 */
function ensureQwenShape(root: string, quick: boolean): string | undefined {
  const dir = '/tmp/ghostline-bench/qwen05b-shape-q4acc4';
  if (fs.existsSync(path.join(dir, 'onnx', 'model_q4.onnx'))) return dir;
  if (quick) return undefined;
  const py = '/usr/bin/python3';
  const script = path.join(root, 'tools', 'model', 'make_random_model.py');
  const r = spawnSync(py, [script, '--out', dir, '--shape', 'qwen2.5-coder-0.5b', '--accuracy-level', '4'], { stdio: 'inherit' });
  return r.status === 0 ? dir : undefined;
}

/** node-llama-cpp, pinned, with only its CPU build for this platform, in .bench-deps/ (not a project dependency). */
function ensureNodeLlamaCpp(root: string): string {
  const dir = path.join(root, '.bench-deps');
  if (!fs.existsSync(path.join(dir, 'node_modules', 'node-llama-cpp'))) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"ghostline-bench-deps","private":true}\n');
    const platform = `@node-llama-cpp/${process.platform === 'darwin' ? 'mac' : process.platform}-${process.arch}@3.22.1`;
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--omit=optional', 'node-llama-cpp@3.22.1', platform], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('npm install node-llama-cpp failed');
  }
  return dir;
}

/** The default model's weights as GGUF (tools/model/export_gguf.py, from its model.safetensors). */
function ensureGguf(root: string, modelDir: string, safetensors: string | undefined, q8: boolean): string {
  const out = path.join(os.tmpdir(), 'ghostline-bench', `${path.basename(modelDir)}${q8 ? '-q8_0' : ''}.gguf`);
  const st = safetensors ?? [path.join(modelDir, 'model.safetensors'), path.join(root, 'tools', 'model', 'runs', 'final', 'model.safetensors')].find((p) => fs.existsSync(p));
  if (!st) throw new Error(`no model.safetensors for ${modelDir} (pass --safetensors FILE)`);
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs > fs.statSync(st).mtimeMs) return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const r = spawnSync('/usr/bin/python3', [path.join(root, 'tools', 'model', 'export_gguf.py'), modelDir, out, '--safetensors', st, ...(q8 ? ['--q8_0'] : [])], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('GGUF export failed');
  return out;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
