// npm run bench [-- --quick] [--model DIR] [--qwen DIR] [--qwen-checkpoint DIR] [--threads N]
// Writes bench/results/latest.json; bench/README.md explains every number.
import { pythonTool } from './pythonTool';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { pickOnnxFile } from '../src/engine/model/modelFolder';
import { defaultThreads, onnxWeightBytes } from '../src/engine/model/onnxModel';
import { measureCopyBandwidth, measureReadBandwidth } from './bandwidth';
import { onnxWeightBytesPerToken } from './onnxWeights';
import { engineBench } from './engineBench';
import { round } from './stats';
import { ensureHfExport, vsTransformersJs, type HfExport } from './transformersJs';
import { typingReplay } from './typingReplay';
import { ensureNodeLlamaCpp, vsLlamaCpp } from './llamaCpp';
import { BENCH_CACHE, ensureQwenCheckpoint, qwenPath, type QwenPathResult } from './qwenPath';
import { flagValue } from './machine';

async function main() {
  const argv = process.argv.slice(2);
  // `npm run bench -- --server`: the team-server load bench (the same as npm run bench:server).
  if (argv.includes('--server')) {
    require('./serverLoadMain');
    return;
  }
  const arg = (name: string) => flagValue(argv, name);
  const quick = argv.includes('--quick');
  const root = packageRoot(__dirname);
  const model = arg('model') ?? defaultModelDir(root);
  const log = (s: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);
  // Qwen2.5-Coder-0.5B's shape: a random-weight Hugging Face checkpoint (bf16 safetensors), the source of all
  // three engines' weights (full run only): converted by Ghostline, exported to GGUF for llama.cpp, exported by
  // torch.onnx for transformers.js (the graph users download today; also the engine's older path).
  let qwenCheckpoint = arg('qwen-checkpoint');
  if (!qwenCheckpoint && !quick) {
    try {
      qwenCheckpoint = ensureQwenCheckpoint(root, log);
    } catch (err) {
      log(`qwen05b checkpoint skipped: ${(err as Error).message}`);
    }
  }
  const qwen = arg('qwen') ?? ensureQwenShape(root, quick, qwenCheckpoint);
  // Every run uses what a user gets, the engine's automatic thread count for the model (1 for the default
  // model, whose graph is too small to gain from a second thread without spinning; 2 for the Qwen shape
  // here), unless --threads is given. Comparisons give the other engine the same count; the default model
  // is also compared at 2 threads (details).
  const forced = arg('threads') ? Number(arg('threads')) : undefined;
  const threadsFor = (onnxFile: string) => forced ?? defaultThreads(onnxWeightBytes(onnxFile));
  const onnx = pickOnnxFile(model);
  const threads = threadsFor(onnx);
  const replayThreads = forced ?? 0;
  const workerPath = path.join(root, 'dist', 'worker.js');
  const machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()}-${os.arch()}`,
    loadavg_at_start: os.loadavg().map((x) => round(x)),
  };

  log('memory bandwidth');
  const copyBandwidth = measureCopyBandwidth();
  const bandwidthThreads = forced ?? defaultThreads();
  const bandwidth = await measureReadBandwidth(bandwidthThreads);

  log(`engine: ${model}`);
  const engine = await engineBench(model, path.join(root, 'src', 'completion', 'completionService.ts'), { threads, quick });

  const sources = [
    path.join(root, 'src', 'completion', 'completionService.ts'),
    path.join(root, 'src', 'engine', 'worker', 'engine.ts'),
    require.resolve('semver/classes/range.js', { paths: [root] }),
    require.resolve('lru-cache', { paths: [root] }),
  ].filter((f) => fs.existsSync(f));
  const replayFiles = quick ? sources.slice(0, 2) : sources;
  log(`typing replay (default model, ${replayFiles.length} files)`);
  const replay = await typingReplay(workerPath, model, replayFiles, { threads: replayThreads, charsPerFile: quick ? 150 : 500, gapMs: 120 });

  log('vs transformers.js (default model)');
  // Real code prompts (about 1,000 characters before a point of each source file) for the as-shipped decode.
  const codePrompts = sources.flatMap((f) => {
    const text = fs.readFileSync(f, 'utf8');
    return [0.3, 0.6, 0.9].slice(0, quick ? 1 : 3).map((at) => text.slice(Math.max(0, Math.floor(text.length * at) - 1000), Math.floor(text.length * at)));
  });
  // transformers.js runs only the Hugging Face / Optimum contract (past_key_values.*), not the converter's lean
  // graph (cache.* inputs) that the default model ships as: it runs a standard export of the same weights (the
  // folder's model.safetensors) in the shipped precision, made here once (ensureHfExport), while Ghostline runs
  // the shipped folder.
  let vsDefault: Awaited<ReturnType<typeof vsTransformersJs>> | null = null;
  let vsDefault2: Awaited<ReturnType<typeof vsTransformersJs>> | null = null;
  let tjsDefaultError: string | null = null;
  let tjsExport: HfExport | null = null;
  try {
    tjsExport = ensureHfExport(root, model, BENCH_CACHE, log);
    const theirs = tjsExport ? { dir: tjsExport.dir, onnx: tjsExport.onnx } : undefined;
    vsDefault = await vsTransformersJs(model, onnx, { threads, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32, codePrompts, theirs });
    vsDefault2 =
      threads === 2 ? null : await vsTransformersJs(model, onnx, { threads: 2, rounds: quick ? 3 : 5, promptTokens: 256, newTokens: 32, codePrompts, theirs });
  } catch (err) {
    tjsDefaultError = (err as Error).message.split('\n')[0];
    log(`transformers.js comparison (default model) skipped: ${tjsDefaultError}`);
  }
  const weightBytes = onnxWeightBytesPerToken(onnx).perToken;

  log('vs llama.cpp (default model, same weights as GGUF)');
  let vsLlama: Awaited<ReturnType<typeof vsLlamaCpp>> | null = null;
  let vsLlama1: Awaited<ReturnType<typeof vsLlamaCpp>> | null = null;
  let benchDeps: string | null = null;
  try {
    const deps = ensureNodeLlamaCpp(root);
    benchDeps = deps;
    // Quantized ONNX (8/4-bit MatMulNBits) against llama.cpp's 8-bit Q8_0; fp32 against F32.
    const gguf = ensureGguf(root, model, arg('safetensors'), /int8|q4|quantized|uint8/.test(path.basename(onnx)));
    vsLlama = await vsLlamaCpp(model, gguf, deps, { threads, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32 });
    // The other thread count too (llama.cpp's worker threads spin-wait: on a busy 2-core machine, an editor
    // or a build, that costs it far more than onnxruntime with spinning off).
    vsLlama1 = await vsLlamaCpp(model, gguf, deps, { threads: threads === 1 ? 2 : 1, rounds: quick ? 3 : 7, promptTokens: 256, newTokens: 32 });
  } catch (err) {
    log(`llama.cpp comparison skipped: ${(err as Error).message}`);
  }
  const defaultDecode = vsDefault?.ghostline.decode_tokens_per_s ?? vsLlama?.ghostline.decode_tokens_per_s ?? NaN;
  const fractionDefault = (defaultDecode * weightBytes) / bandwidth;

  let qwenResult: Record<string, unknown> | null = null;
  if (qwen) {
    log(`qwen2.5-coder-0.5b shape, torch.onnx graph: ${qwen}`);
    // The graph users download today (torch.onnx's export, MatMulNBits 4-bit), in Ghostline's engine: the
    // typing replay before the converter (details), the engine against transformers.js on that same file, and
    // the fp32 graph for the memory-bound bandwidth key. Random weights: prompt lookup off.
    const qReplay = await typingReplay(workerPath, qwen, replayFiles.slice(0, 1), {
      threads: replayThreads,
      charsPerFile: quick ? 60 : 200,
      gapMs: 150,
      pauseMs: 5000,
      fixedNewTokens: 12,
      speculativeTokens: 0,
    });
    const qOnnx = pickOnnxFile(qwen);
    const qThreads = threadsFor(qOnnx);
    const vsQ4 = await vsTransformersJs(qwen, qOnnx, { threads: qThreads, rounds: quick ? 2 : 3, promptTokens: 128, newTokens: 16 });
    const q4Bytes = onnxWeightBytesPerToken(qOnnx);
    const fp32Dir = qwenFp32Dir(qwen);
    const fp32 = fp32Dir ? path.join(fp32Dir, 'onnx', 'model.onnx') : null;
    const vsFp32 = fp32 && !quick ? await vsTransformersJs(fp32Dir as string, fp32, { threads: qThreads, rounds: 2, promptTokens: 128, newTokens: 16 }) : null;
    const fp32Bytes = fp32 ? onnxWeightBytesPerToken(fp32) : null;
    qwenResult = {
      dir: qwen,
      onnx_for_latency: path.basename(qOnnx),
      typing_torch_onnx: qReplay,
      vs_transformersjs_q4: vsQ4,
      vs_transformersjs_fp32: vsFp32,
      weight_bytes_per_token_q4: q4Bytes,
      weight_bytes_per_token_fp32: fp32Bytes,
      fraction_of_bandwidth_limit_q4_torch_onnx: round((vsQ4.ghostline.decode_tokens_per_s * q4Bytes.perToken) / bandwidth, 3),
      fraction_of_bandwidth_limit_fp32: vsFp32 && fp32Bytes ? round((vsFp32.ghostline.decode_tokens_per_s * fp32Bytes.perToken) / bandwidth, 3) : null,
    };
  }

  // Issue 12's path: the checkpoint converted by `ghostline convert --quant q4`, against llama.cpp (Q4_0 GGUF,
  // the same codes) at 128 and 1,200 prompt tokens and transformers.js (torch.onnx q4 graph) at 1,200, 2 threads.
  let qp: QwenPathResult | null = null;
  if (qwenCheckpoint && !quick) {
    const qThreads = forced ?? 2;
    try {
      const qBandwidth = qThreads === bandwidthThreads ? bandwidth : await measureReadBandwidth(qThreads);
      qp = await qwenPath({
        root,
        threads: qThreads,
        rounds: [5, 3],
        newTokens: 32,
        promptTokens: [128, 1200],
        workerPath,
        replayFiles: replayFiles.slice(0, 1),
        readBandwidth: qBandwidth,
        benchDeps,
        torchDir: qwen && fs.existsSync(path.join(qwen, 'onnx', 'model_q4.onnx')) ? qwen : null,
        checkpoint: qwenCheckpoint,
        log,
      });
    } catch (err) {
      log(`qwen05b converted path failed: ${(err as Error).stack ?? err}`);
    }
  }
  const qLen = (n: number) => qp?.by_length[String(n)] ?? null;

  const results = {
    date: new Date().toISOString(),
    command: `npm run bench -- ${argv.join(' ')}`.trim(),
    machine,
    reuse: { median_prefill_fraction: replay.median_prefill_fraction },
    latency: {
      default: { p50_ms: replay.latency_ms.p50, p95_ms: replay.latency_ms.p95, p99_ms: replay.latency_ms.p99 },
      // The typing replay on the converted graph (issue 12); on torch.onnx's graph in details.qwen05b.
      qwen05b: qp ? { p50_ms: qp.typing.latency_ms.p50, p95_ms: qp.typing.latency_ms.p95 } : null,
    },
    throughput: {
      // As shipped (prompt lookup on), greedy, on real code; the plain engine and the synthetic prompt below.
      decode_ratio_vs_transformersjs: vsDefault ? (vsDefault.code?.ratio_speculative ?? vsDefault.decode_ratio) : null,
      decode_ratio_vs_transformersjs_plain: vsDefault?.code?.ratio_plain ?? null,
      decode_ratio_vs_transformersjs_synthetic_prompt: vsDefault?.decode_ratio ?? null,
      prefill_ratio_vs_transformersjs: vsDefault?.prefill_ratio ?? null,
      decode_ratio_vs_transformersjs_error: tjsDefaultError,
      decode_ratio_vs_llamacpp: vsLlama?.decode_ratio ?? null,
      prefill_ratio_vs_llamacpp: vsLlama?.prefill_ratio ?? null,
      qwen05b: {
        decode_ratio_vs_llamacpp_128: qLen(128)?.decode_ratio_vs_llamacpp ?? null,
        decode_ratio_vs_llamacpp_1200: qLen(1200)?.decode_ratio_vs_llamacpp ?? null,
        prefill_ratio_vs_llamacpp_128: qLen(128)?.prefill_ratio_vs_llamacpp ?? null,
        prefill_ratio_vs_llamacpp_1200: qLen(1200)?.prefill_ratio_vs_llamacpp ?? null,
        decode_ratio_vs_transformersjs_1200: qLen(1200)?.decode_ratio_vs_transformersjs ?? null,
        prefill_ratio_vs_transformersjs_1200: qLen(1200)?.prefill_ratio_vs_transformersjs ?? null,
      },
    },
    convert: { qwen05b: qp ? { seconds: qp.convert.seconds, peak_rss_mb: qp.convert.peak_rss_mb } : null },
    bandwidth: {
      // The limit: bytes read per second with the model's thread count (memcmp of buffers far larger than
      // the caches). The share is taken where decode is bound by memory: the Qwen shape with fp32 weights
      // (q4 decode is bound by dequantizing compute on 2 cores, and the 9 MB default model sits in cache).
      read_gb_per_s: round(bandwidth / 1e9),
      read_threads: bandwidthThreads,
      copy_gb_per_s_one_thread: round(copyBandwidth / 1e9),
      fraction_of_limit:
        (qwenResult?.fraction_of_bandwidth_limit_fp32 as number | null) ??
        (qwenResult?.fraction_of_bandwidth_limit_q4_torch_onnx as number | undefined) ??
        round(fractionDefault, 3),
      fraction_of_limit_model: qwenResult?.fraction_of_bandwidth_limit_fp32 ? 'qwen05b-shape fp32' : qwenResult ? 'qwen05b-shape q4' : path.basename(model),
      // Ghostline's converted q4 graph, decode after a 128-token prompt (details.qwen05b_converted).
      fraction_of_limit_qwen_q4: qp?.fraction_of_bandwidth_limit ?? null,
      fraction_of_limit_qwen_q4_torch_onnx: qwenResult?.fraction_of_bandwidth_limit_q4_torch_onnx ?? null,
      fraction_of_limit_default_model: round(fractionDefault, 3),
      weight_bytes_per_token_default_model: weightBytes,
    },
    event_loop: { p99_lag_ms: replay.event_loop_p99_lag_ms },
    memory: { worker_rss_mb: replay.worker_rss_mb, host_rss_mb: replay.host_rss_mb },
    details: {
      engine,
      typing_default: replay,
      vs_transformersjs_default: vsDefault,
      transformersjs_default_export: tjsExport,
      vs_llamacpp_default: vsLlama,
      vs_llamacpp_default_other_threads: vsLlama1,
      vs_transformersjs_default_2_threads: vsDefault2,
      qwen05b: qwenResult,
      qwen05b_converted: qp,
    },
  };
  const out = path.join(root, 'bench', 'results', 'latest.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
}

/** The Qwen-shape folder holding the fp32 model.onnx (make_random_model.py leaves it next to the q4 file). */
function qwenFp32Dir(q4Dir: string): string | null {
  for (const dir of [q4Dir, path.join(path.dirname(q4Dir), 'qwen05b-shape-fp32')]) {
    if (fs.existsSync(path.join(dir, 'onnx', 'model.onnx'))) return dir;
  }
  return null;
}

/**
 * torch.onnx's graph of the Qwen-shape checkpoint (tools/model/make_random_model.py --from-checkpoint, Debian's
 * torch): fp32 plus MatMulNBits 4-bit (accuracy level 4, int8 compute: 3-4x faster prefill on CPU than level
 * 0), the same weights as the converted graph and the GGUF. Made once per checkpoint; --quick uses it only
 * when it is already there.
 */
function ensureQwenShape(root: string, quick: boolean, checkpoint: string | undefined): string | undefined {
  const dir = path.join(BENCH_CACHE, 'qwen05b-torch-onnx-q4acc4');
  const q4 = path.join(dir, 'onnx', 'model_q4.onnx');
  const st = checkpoint ? path.join(checkpoint, 'model.safetensors') : null;
  const fresh = fs.existsSync(q4) && (!st || !fs.existsSync(st) || fs.statSync(q4).mtimeMs > fs.statSync(st).mtimeMs);
  if (fresh || (quick && fs.existsSync(q4))) return dir;
  if (quick || !checkpoint) return undefined;
  const script = path.join(root, 'tools', 'model', 'make_random_model.py');
  const tool = pythonTool(root, script, ['--out', dir, '--from-checkpoint', checkpoint, '--accuracy-level', '4']);
  const r = spawnSync('/usr/bin/python3', tool.args, { stdio: ['ignore', 2, 2], env: tool.env }); // stdout carries the results JSON
  return r.status === 0 ? dir : undefined;
}

/** node-llama-cpp, pinned, with only its CPU build for this platform, in .bench-deps/ (not a project dependency). */

/** The default model's weights as GGUF (tools/model/export_gguf.py, from its model.safetensors). */
function ensureGguf(root: string, modelDir: string, safetensors: string | undefined, q8: boolean): string {
  const out = path.join(BENCH_CACHE, `${path.basename(modelDir)}${q8 ? '-q8_0' : ''}.gguf`);
  const st =
    safetensors ??
    [path.join(modelDir, 'model.safetensors'), path.join(root, 'tools', 'model', 'runs', 'final', 'model.safetensors')].find((p) => fs.existsSync(p));
  if (!st) throw new Error(`no model.safetensors for ${modelDir} (pass --safetensors FILE)`);
  const script = path.join(root, 'tools', 'model', 'export_gguf.py');
  if (
    fs.existsSync(out) &&
    [st, script, path.join(root, 'tools', 'model', 'safetensors_io.py')].every((f) => fs.statSync(out).mtimeMs > fs.statSync(f).mtimeMs)
  )
    return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tool = pythonTool(root, script, [modelDir, out, '--safetensors', st, ...(q8 ? ['--q8_0'] : [])]);
  const r = spawnSync('/usr/bin/python3', tool.args, { stdio: ['ignore', 2, 2], env: tool.env }); // stdout carries the results JSON
  if (r.status !== 0) throw new Error('GGUF export failed');
  return out;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
