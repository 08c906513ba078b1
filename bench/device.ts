// What `npm run bench:device` measures on one model and one device: load, the first run (shader compilation on a
// GPU), prefill and decode ms/token on the workload `auto` times, decode at a long context, and the bytes that
// cross between the CPU and the device per decode step. See bench/deviceMain.ts for the command.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { ComputeDevice } from '../src/engine/shared/device';
import { errorMessage } from '../src/engine/shared/errors';
import { LeanKvCache } from '../src/engine/model/leanCache';
import { OnnxCausalLM } from '../src/engine/model/onnxModel';
import { timeWorkload } from '../src/engine/worker/deviceChoice';
import { DeviceModel } from '../src/engine/worker/deviceModel';
import { round } from './stats';

/** `auto`'s own workload (src/engine/worker/deviceChoice.ts): the rows are comparable with its verdicts. */
export const WORKLOAD = { prefillTokens: 128, decodeTokens: 16 };
/** The long context of the copy-cost question: a 1,500-token file, then decode steps on it. */
export const LONG_CONTEXT = 1500;
const LONG_DECODE_STEPS = 8;

export interface CopyPerStep {
  context: number;
  /**
   * Cache bytes uploaded per decode step, counted by the session (deviceCacheMirror.ts): 0 where the cache
   * stays on the GPU, else the whole store (rounded up to its 256-position capacity). The CPU reads it in place.
   */
  cacheUploadBytes: number;
  /** The new token's K/V rows and its logits, read back per step (an export without a kept copy: its whole present). */
  readBackBytes: number;
  decodeMsPerToken: number;
}

/** The first request after a load (a 100-token prompt, 4 decode steps), without and with the load's warm-up. */
export interface FirstRequest {
  coldMs: number;
  /** What the warm-up (DeviceModel.warmUp) took at load. */
  warmUpMs: number;
  warmedMs: number;
  /** The same request once more on the warmed session: the steady state. */
  againMs: number;
}

export interface DeviceRow {
  model: string;
  device: ComputeDevice;
  /** On the GPU: whether the KV cache stayed there between runs, or why it was uploaded on every run. */
  cacheOnDevice?: true | string;
  loadMs: number;
  firstRunMs: number;
  prefillMsPerToken: number;
  decodeMsPerToken: number;
  prefillTokensPerS: number;
  decodeTokensPerS: number;
  /** At WORKLOAD's context and at LONG_CONTEXT where the model's window has room. */
  copy: CopyPerStep[];
  /** On the GPU: what the load's warm-up saves the first request. */
  firstRequest?: FirstRequest;
  error?: string;
}

/**
 * One model on one device. On the CPU the cache buffers are read in place (onnxruntime does not copy CPU
 * inputs), so only the read-back counts; on the GPU the session counts what goes up (nothing of the cache while
 * its copy stays there; with `deviceCache` false, the whole store every run).
 */
export async function measureDevice(
  name: string,
  file: string,
  config: Record<string, unknown>,
  device: ComputeDevice,
  contextLength: number,
  threads?: number,
  deviceCache?: boolean,
): Promise<DeviceRow> {
  const t0 = performance.now();
  const model = await OnnxCausalLM.load(file, config, { device, threads, deviceCache });
  const loadMs = performance.now() - t0;
  try {
    const prefillTokens = Math.max(8, Math.min(WORKLOAD.prefillTokens, Math.floor(contextLength / 4)));
    const t = await timeWorkload(model, prefillTokens, WORKLOAD.decodeTokens);
    const copy = [await copyCost(model, device, prefillTokens)];
    if (contextLength >= LONG_CONTEXT + LONG_DECODE_STEPS) copy.push(await copyCost(model, device, LONG_CONTEXT));
    return {
      model: name,
      device,
      ...(device === 'gpu' && { cacheOnDevice: model.deviceCacheWhyNot ?? true }),
      loadMs: round(loadMs, 0),
      firstRunMs: round(t.firstRunMs, 0),
      prefillMsPerToken: round(t.prefillMsPerToken, 3),
      decodeMsPerToken: round(t.decodeMsPerToken, 3),
      prefillTokensPerS: round(1000 / t.prefillMsPerToken, 1),
      decodeTokensPerS: round(1000 / t.decodeMsPerToken, 1),
      copy,
    };
  } finally {
    await model.release();
  }
}

/** Prefill `context` tokens, then time decode steps and count what crosses per step. */
async function copyCost(model: OnnxCausalLM, device: ComputeDevice, context: number): Promise<CopyPerStep> {
  const c = model.contract;
  const ids = Array.from({ length: context }, (_, i) => (i * 31 + 7) % Math.min(c.vocab, 256));
  let r = await model.forward([ids], model.emptyCache());
  const before = model.deviceCacheStats?.uploadedBytes ?? 0;
  const t0 = performance.now();
  for (let i = 0; i < LONG_DECODE_STEPS; i++) r = await model.forward([[ids[i]]], r.cache);
  const decodeMsPerToken = (performance.now() - t0) / LONG_DECODE_STEPS;
  const stats = model.deviceCacheStats;
  // Without a kept copy every run feeds the whole host-side cache (the Hugging Face contract: all past positions).
  const storeBytes = r.cache instanceof LeanKvCache ? r.cache.store.bytes : kvBytes(model) * (context + LONG_DECODE_STEPS);
  const uploaded = stats ? (stats.uploadedBytes - before) / LONG_DECODE_STEPS : storeBytes;
  // An export returns its whole present unless its copy stays on the GPU (then only the step's rows come back).
  const wholePresent = c.kind === 'hf' && !stats;
  return {
    context,
    cacheUploadBytes: device === 'gpu' ? uploaded : 0,
    readBackBytes: (wholePresent ? kvBytes(model) * (context + LONG_DECODE_STEPS) : kvBytes(model)) + c.vocab * 4,
    decodeMsPerToken: round(decodeMsPerToken, 3),
  };
}

/**
 * The first request on a fresh GPU session, then on another fresh session after the engine's warm-up: the shaders
 * a request needs compile on its first run, which the warm-up moves to the load.
 */
export async function firstRequest(file: string, config: Record<string, unknown>): Promise<FirstRequest> {
  const request = async (model: OnnxCausalLM, salt: number) => {
    const t0 = performance.now();
    const ids = Array.from({ length: 100 }, (_, i) => (i * 7 + salt) % Math.min(model.contract.vocab, 300));
    let r = await model.forward([ids], model.emptyCache());
    for (let i = 0; i < 4; i++) r = await model.forward([[ids[i]]], r.cache);
    return performance.now() - t0;
  };
  const cold = await OnnxCausalLM.load(file, config, { device: 'gpu' });
  const coldMs = await request(cold, 1).finally(() => cold.release());
  const gpu = await OnnxCausalLM.load(file, config, { device: 'gpu' });
  try {
    const warmed = new DeviceModel(gpu, { setting: 'gpu', device: 'gpu', reason: 'bench' }, () => Promise.reject(new Error('no CPU here')));
    const warmUpMs = (await warmed.warmUp()) ?? 0;
    const warmedMs = await request(gpu, 1);
    const againMs = await request(gpu, 2);
    return { coldMs: round(coldMs, 0), warmUpMs: round(warmUpMs, 0), warmedMs: round(warmedMs, 0), againMs: round(againMs, 0) };
  } finally {
    await gpu.release();
  }
}

/** K and V of one position in every layer, as the host keeps them (float32). */
function kvBytes(model: OnnxCausalLM): number {
  const c = model.contract;
  return c.layers * 2 * c.kvHeads * c.headDim * 4;
}

export interface Placement {
  /** Nodes per execution provider, from onnxruntime's verbose session log. */
  nodes: Record<string, number>;
  error?: string;
}

/**
 * Which nodes the WebGPU provider takes and which fall back to the CPU. onnxruntime prints the assignment only
 * to its own log at verbose level, which is native stderr: read from a child process.
 */
export function gpuPlacement(root: string, file: string): Placement {
  const script = path.join(root, 'out', 'bench', 'devicePlacement.js');
  const r = spawnSync(process.execPath, [script, file], { encoding: 'utf8', timeout: 10 * 60_000, maxBuffer: 256 * 1024 * 1024 });
  const nodes: Record<string, number> = {};
  for (const m of `${r.stdout}${r.stderr}`.matchAll(/placed on \[(\w+)ExecutionProvider\]\. Number of nodes: (\d+)/g)) nodes[m[1]] = Number(m[2]);
  if (r.status !== 0 || Object.keys(nodes).length === 0)
    return { nodes, error: (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(-1)[0] };
  return { nodes };
}

export function failedRow(model: string, device: ComputeDevice, err: unknown, cacheOnDevice?: string): DeviceRow {
  return {
    model,
    device,
    ...(cacheOnDevice && { cacheOnDevice }),
    loadMs: 0,
    firstRunMs: 0,
    prefillMsPerToken: 0,
    decodeMsPerToken: 0,
    prefillTokensPerS: 0,
    decodeTokensPerS: 0,
    copy: [],
    error: errorMessage(err),
  };
}
