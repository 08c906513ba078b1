import type { EngineOptions } from '../shared/engineOptions';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import type { ComputeDevice } from '../shared/device';
import { GpuError, ModelFolderError, errorMessage } from '../shared/errors';
import type { DeviceCacheCounts } from '../shared/device';
import { DeviceCacheMirror } from './deviceCacheMirror';
import { deviceCacheVariant, readGraph } from './deviceCacheVariant';
import { presentRows } from './exportCacheGraph';
import { productsOnCpu } from './gpuKernels';
import { halfToFloat } from './half';
import { readIoContract, type IoContract } from './ioContract';
import { KvCache } from './kvCache';
import { LeanKvCache, attentionBias } from './leanCache';
import { leanNames } from './leanContract';

/** The KV cache of either contract (same operations; the model picks the kind). */
export type AnyKvCache = KvCache | LeanKvCache;

export interface SessionOptions extends Pick<EngineOptions, 'threads'> {
  /** The CPU (default), or the GPU through onnxruntime's WebGPU provider. */
  device?: ComputeDevice;
  /**
   * Keep the KV cache on the device between runs (deviceCacheVariant.ts). Default: on the GPU, where it saves
   * uploading the whole cache per step. false there gives the upload on every run (bench:device compares the
   * two); true on the CPU runs the same graph with its copies in memory, which the tests compare with the plain
   * graph, exactly.
   */
  deviceCache?: boolean;
}

/**
 * Threads when the setting says "automatic". A small model (under 64 MB of weights) runs faster on one
 * thread: per-step work is too small to split, and the other core stays free for the editor (measured on
 * the default model, 2 cores: 1.1 ms per token on 1 thread against 1.7 ms on 2). Larger models use up to
 * 4 cores.
 */
export function defaultThreads(weightBytes = Infinity): number {
  if (weightBytes < 64 * 1024 * 1024) return 1;
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

/**
 * onnxruntime's threading entries for `threads` intra-op threads. Pool threads spin between operators only
 * while a run is in progress (`force_spinning_stop`: they stop when it returns, so an idle engine takes no CPU
 * and the editor never competes with a spinning thread between tokens). Spinning saves the wake-up of a
 * sleeping thread at each of a step's ~170 parallel operators: measured on the Qwen2.5-Coder-0.5B shape, 2
 * threads on 2 cores, 128 cached tokens, 8 interleaved rounds: 51.2 against 49.1 tokens/s decode, 1.93
 * against 1.80 cores busy while generating (3% more CPU per token).
 */
function threadingEntries(threads: number): Record<string, unknown> {
  return {
    session: {
      intra_op: { allow_spinning: threads > 1 ? '1' : '0' },
      inter_op: { allow_spinning: '0' },
      force_spinning_stop: '1',
    },
  };
}

/** Bytes of an ONNX file and its external data files (named after it, as exporters write them). */
export function onnxWeightBytes(file: string): number {
  const dir = path.dirname(file);
  const base = path.basename(file);
  return fs
    .readdirSync(dir)
    .filter((f) => f === base || f.startsWith(`${base}_data`) || f.startsWith(`${base}.data`))
    .reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
}

export interface ForwardResult {
  /** Row-major [batch, rows, vocab] float32 logits of the last `rows` positions. */
  logits: Float32Array;
  /** log(sum(exp)) of each of those [batch, rows] rows, when the graph computes it (see leanContract.ts). */
  lse?: Float32Array;
  rows: number;
  cache: AnyKvCache;
}

/** One ONNX causal LM session, fed through the Hugging Face / Optimum decoder contract. */
export class OnnxCausalLM {
  private constructor(
    private readonly session: InferenceSession,
    readonly contract: IoContract,
    readonly file: string,
    readonly device: ComputeDevice,
    /** The GPU's copy of the cache, when the graph keeps it there. */
    private readonly mirror: DeviceCacheMirror | null,
    /** Why the cache is uploaded on every GPU run instead of staying there; null when it stays (or on the CPU). */
    readonly deviceCacheWhyNot: string | null,
    /** On the GPU: the graph's matrix products that run on the CPU all the same (gpuKernels.ts), or null. */
    readonly gpuCpuProducts: string | null = null,
  ) {}

  /** What crossed to the GPU for the cache since the session opened; null where it is not kept there. */
  get deviceCacheStats(): DeviceCacheCounts | null {
    return this.mirror?.stats ?? null;
  }

  /**
   * A session on the CPU or the GPU. On the GPU every heavy node runs in the WebGPU provider and onnxruntime
   * keeps a few shape computations on the CPU; one CPU thread serves those. A GPU that cannot be opened
   * throws GpuError, so the caller can fall back to the CPU.
   */
  static async load(file: string, config: Record<string, unknown>, opts: SessionOptions = {}): Promise<OnnxCausalLM> {
    let session: InferenceSession | null = null;
    const device = opts.device ?? 'cpu';
    const threads = device === 'gpu' ? 1 : opts.threads && opts.threads > 0 ? opts.threads : defaultThreads(onnxWeightBytes(file));
    const base: InferenceSession.SessionOptions = {
      executionProviders: [device === 'gpu' ? 'webgpu' : 'cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      extra: threadingEntries(threads),
    };
    // The graph without its weights, read for the GPU (and the CPU tests of its variant): what would still run
    // on the CPU there, and the variant that keeps the KV cache on the device.
    const graph = device === 'gpu' || opts.deviceCache ? readGraph(file) : null;
    const cpuProducts = graph && !('why' in graph) ? productsOnCpu(graph) : null;
    let whyNot: string | null = 'on the CPU';
    let mirror: DeviceCacheMirror | null = null;
    if (opts.deviceCache === false) whyNot = 'turned off';
    else if (graph) {
      const variant = await openDeviceCacheVariant(file, graph, base, device);
      if ('session' in variant) [session, mirror, whyNot] = [variant.session, variant.mirror, null];
      else whyNot = variant.why;
    }
    try {
      session ??= await InferenceSession.create(file, base);
    } catch (err) {
      if (device === 'gpu') throw new GpuError(`the GPU could not run it: ${errorMessage(err)}`);
      throw new ModelFolderError(file, `onnxruntime could not load it: ${errorMessage(err)}`);
    }
    try {
      return new OnnxCausalLM(session, readIoContract(session, config, file), file, device, mirror, whyNot, cpuProducts);
    } catch (err) {
      await session.release();
      throw err;
    }
  }

  emptyCache(batch = 1): AnyKvCache {
    return this.contract.kind === 'lean' ? LeanKvCache.empty(this.contract, batch) : KvCache.empty(this.contract, batch);
  }

  /**
   * Feeds `tokens` (batch rows of equal length) after the cache and returns logits for the last
   * `keep` positions of each row plus the extended cache.
   */
  async forward(tokens: number[][], cache: AnyKvCache, keep = 1): Promise<ForwardResult> {
    if (cache instanceof LeanKvCache) return this.forwardLean(tokens, cache, keep);
    const c = this.contract;
    const batch = tokens.length;
    const seq = tokens[0].length;
    const past = cache.length;
    const total = past + seq;
    const ids = new BigInt64Array(batch * seq);
    for (const [b, row] of tokens.entries()) for (const [i, t] of row.entries()) ids[b * seq + i] = BigInt(t);
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [batch, seq]),
      attention_mask: new Tensor('int64', new BigInt64Array(batch * total).fill(1n), [batch, total]),
    };
    if (c.hasPositionIds) {
      const pos = new BigInt64Array(batch * seq);
      for (let b = 0; b < batch; b++) for (let i = 0; i < seq; i++) pos[b * seq + i] = BigInt(past + i);
      feeds.position_ids = new Tensor('int64', pos, [batch, seq]);
    }
    if (c.hasUseCacheBranch) feeds.use_cache_branch = new Tensor('bool', new Uint8Array([past > 0 ? 1 : 0]), [1]);
    if (c.hasNumLogitsToKeep) feeds.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(BigInt(keep)), []);
    // The GPU's copy serves a cache it is the lineage of: the graph cuts it to the mask's length.
    const onDevice = this.mirror?.feedsFor(cache.lineage, 0, cache.bytes) ?? null;
    if (onDevice) Object.assign(feeds, onDevice);
    else {
      for (let i = 0; i < c.layers; i++) {
        feeds[c.pastName(i, 'key')] = cache.tensors[2 * i];
        feeds[c.pastName(i, 'value')] = cache.tensors[2 * i + 1];
      }
    }
    const out = await this.runOrDropCopy(feeds);
    const present = (name: (i: number, kind: 'key' | 'value') => string) =>
      Array.from({ length: c.layers }, (_, i) => [out[name(i, 'key')] as Tensor, out[name(i, 'value')] as Tensor]).flat();
    let next: KvCache;
    if (this.mirror) {
      // The whole present stays on the GPU; only this run's rows come back, appended to the host's copy.
      next = cache.append(
        present((i, kind) => presentRows(c.presentName(i, kind))),
        tokens[0],
      );
      this.mirror.keep(next.lineage, 0, out as Record<string, Tensor>);
    } else next = cache.advance(present(c.presentName), tokens[0]);
    const logitsT = out.logits as Tensor;
    const [, rowsOut, vocab] = logitsT.dims;
    const rows = Math.min(keep, rowsOut);
    const logits = lastRows(logitsT, batch, rowsOut, rows, vocab);
    return { logits, rows, cache: next };
  }

  /** One run; a failed one drops the GPU's copy (it may be gone with the device), the host's cache being as it was. */
  private async runOrDropCopy(feeds: Record<string, Tensor>): Promise<InferenceSession.OnnxValueMapType> {
    try {
      return await this.session.run(feeds);
    } catch (err) {
      this.mirror?.drop();
      throw err;
    }
  }

  /**
   * The lean contract: cache buffers go in as inputs, only the new K/V rows come out, and are written into
   * the buffers here. A cache that is too small is first copied into a larger store.
   */
  private async forwardLean(tokens: number[][], cache: LeanKvCache, keep: number): Promise<ForwardResult> {
    const batch = tokens.length;
    const seq = tokens[0].length;
    const past = cache.length;
    const store = cache.storeFor(past + seq);
    const ids = new BigInt64Array(batch * seq);
    const pos = new BigInt64Array(batch * seq);
    for (const [b, row] of tokens.entries()) {
      for (const [i, t] of row.entries()) {
        ids[b * seq + i] = BigInt(t);
        pos[b * seq + i] = BigInt(past + i);
      }
    }
    // A first chunk skips the empty cache slots on the CPU; WebGPU cannot take zero-sized inputs (the process
    // crashes), so there the slots go in masked, as they do wherever the cache's copy is kept by the graph
    // (its output has the input's capacity).
    const cap = past === 0 && this.device === 'cpu' && !this.mirror ? 0 : store.cap;
    const onDevice = this.mirror?.feedsFor(store, store.version, store.bytes) ?? null;
    const feeds: Record<string, Tensor> = {
      ...(onDevice ?? (cap ? store.feeds() : store.emptyFeeds())),
      [leanNames.inputIds]: new Tensor('int64', ids, [batch, seq]),
      [leanNames.positionIds]: new Tensor('int64', pos, [batch, seq]),
      [leanNames.attentionBias]: new Tensor('float32', attentionBias(past, seq, cap), [seq, cap + seq]),
      [leanNames.keep]: new Tensor('int64', BigInt64Array.of(BigInt(keep)), []),
    };
    const out = await this.runOrDropCopy(feeds);
    store.write((out[leanNames.newKv] as Tensor).data as Float32Array, seq, past);
    this.mirror?.keep(store, store.version, out as Record<string, Tensor>);
    const logitsT = out[leanNames.logits] as Tensor;
    const [, rowsOut, vocab] = logitsT.dims;
    const rows = Math.min(keep, rowsOut);
    const logits = lastRows(logitsT, batch, rowsOut, rows, vocab);
    // Used only when it has the declared shape [batch, kept] (a graph that says otherwise is not trusted).
    const lseT = out[leanNames.logitsLse] as Tensor | undefined;
    const lseOk = lseT?.type === 'float32' && lseT.dims.length === 2 && lseT.dims[0] === batch && lseT.dims[1] === rowsOut;
    const lse = lseOk ? lastRows(lseT, batch, rowsOut, rows, 1) : undefined;
    return { logits, lse, rows, cache: new LeanKvCache(store, cache.tokens.concat(tokens[0]), past + seq) };
  }

  async release(): Promise<void> {
    this.mirror?.drop();
    await this.session.release();
  }
}

/**
 * A session of the graph that keeps the KV cache on the device (deviceCacheVariant.ts) with its mirror, or why
 * there is none. The variant is loaded from memory, so onnxruntime is told the folder its weights are read
 * from. Any failure here leaves the plain graph to try (a GPU that cannot run at all fails there too, with its
 * own message).
 */
async function openDeviceCacheVariant(
  file: string,
  graph: ReturnType<typeof readGraph>,
  base: InferenceSession.SessionOptions,
  device: ComputeDevice,
): Promise<{ session: InferenceSession; mirror: DeviceCacheMirror } | { why: string }> {
  const variant = deviceCacheVariant(graph);
  if ('why' in variant) return variant;
  const mirror = new DeviceCacheMirror(variant.kept);
  const extra = base.extra as { session?: Record<string, unknown> } | undefined;
  try {
    const session = await InferenceSession.create(variant.bytes, {
      ...base,
      ...(device === 'gpu' && { preferredOutputLocation: Object.fromEntries(mirror.outputNames.map((n) => [n, 'gpu-buffer' as const])) }),
      extra: { ...extra, session: { ...extra?.session, model_external_initializers_file_folder_path: path.dirname(file) } },
    });
    return { session, mirror };
  } catch (err) {
    return { why: `onnxruntime could not run the graph that keeps the cache on the device (${errorMessage(err)})` };
  }
}

/** The last `rows` of each batch's [rowsOut, vocab] block, as float32 (onnxruntime's own buffer when that is all of it). */
function lastRows(t: Tensor, batch: number, rowsOut: number, rows: number, vocab: number): Float32Array {
  const src = t.data as Float32Array | Uint16Array;
  // Every fetched output is already a fresh copy: a 152k-wide row need not be copied again.
  if (t.type === 'float32' && rows === rowsOut && src.length === batch * rows * vocab) return src as Float32Array;
  const out = new Float32Array(batch * rows * vocab);
  for (let b = 0; b < batch; b++) {
    const from = (b * rowsOut + rowsOut - rows) * vocab;
    const slice = src.subarray(from, from + rows * vocab);
    if (t.type === 'float16') {
      for (let i = 0; i < slice.length; i++) out[b * rows * vocab + i] = halfToFloat(slice[i]);
    } else {
      out.set(slice as Float32Array, b * rows * vocab);
    }
  }
  return out;
}
