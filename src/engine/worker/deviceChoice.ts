import { env, listSupportedBackends } from 'onnxruntime-node';
import type { EngineOptions } from '../shared/engineOptions';
import { gpuApiFor, type DeviceReport, type DeviceSetting, type DeviceTiming } from '../shared/device';
import { errorMessage } from '../shared/errors';
import { OnnxCausalLM } from '../model/onnxModel';
import { DeviceVerdicts, failureExpiry, failureHolds, verdictKey, type DeviceVerdict, type Remembered } from './deviceVerdicts';
import { describeGpuNames, gpuNames } from './gpuNames';

/**
 * The GPU is kept only when the measured workload runs this much faster there: at a tie the CPU wins, as it
 * compiles no shaders at load and has no driver to lose.
 */
export const GPU_MARGIN = 1.2;

/** The measured workload: a prefill of this many tokens (at most a quarter of the context), then decode steps. */
const PREFILL_TOKENS = 128;
const DECODE_TOKENS = 16;

export interface DeviceChoice {
  model: OnnxCausalLM;
  report: DeviceReport;
  /** The GPU session has run already (auto just measured it): its shaders are compiled, no warm-up is needed. */
  warmed?: boolean;
}

export interface ChooseDeviceOptions extends Pick<EngineOptions, 'device' | 'threads' | 'deviceVerdictFile'> {
  contextLength: number;
  /** A log line (the worker's stderr, which the extension puts in its log). */
  log?: (line: string) => void;
}

/** Whether this onnxruntime build has the WebGPU provider on this platform, and the graphics API it drives. */
export function gpuSupport(): { api: string } | { missing: string } {
  const api = gpuApiFor(process.platform, process.arch);
  if (!api) return { missing: `onnxruntime has no WebGPU provider for ${process.platform}-${process.arch}` };
  const backends = listSupportedBackends?.() ?? [];
  if (!backends.some((b) => b.name === 'webgpu')) return { missing: 'this onnxruntime build has no WebGPU provider' };
  return { api };
}

/**
 * Opens the model's session on the device the setting asks for. `cpu`: the CPU. `gpu`: the GPU, or the CPU
 * with the reason when it cannot be opened. `auto`: the verdict remembered for this model and machine, or,
 * on the first load, both devices timed on the same workload and the faster kept (GPU_MARGIN), the verdict
 * remembered in `deviceVerdictFile`.
 */
export async function chooseDevice(file: string, config: Record<string, unknown>, opts: ChooseDeviceOptions): Promise<DeviceChoice> {
  const setting = opts.device ?? 'auto';
  const loadCpu = () => OnnxCausalLM.load(file, config, { threads: opts.threads, device: 'cpu' });
  const cpuWith = async (reason: string, measured?: DeviceVerdict): Promise<DeviceChoice> => ({
    model: await loadCpu(),
    report: { setting, device: 'cpu', reason, ...(measured ? { measured: measurement(measured) } : {}) },
  });
  if (setting === 'cpu') return cpuWith('the device is set to cpu');
  const support = gpuSupport();
  if ('missing' in support) return cpuWith(support.missing);
  const gpuReport = (model: OnnxCausalLM, reason: string, measured?: DeviceVerdict) => gpuReportFor(setting, support.api, model, reason, measured);

  if (setting === 'gpu') {
    void adapterName();
    try {
      const model = await OnnxCausalLM.load(file, config, { device: 'gpu' });
      return { model, report: await gpuReport(model, 'the device is set to gpu') };
    } catch (err) {
      opts.log?.(`the GPU could not be opened: ${errorMessage(err)}`);
      return cpuWith(gpuOpenFailure(err, support.api));
    }
  }

  const store = opts.deviceVerdictFile ? new DeviceVerdicts(opts.deviceVerdictFile) : null;
  const key = verdictKey(file, ortVersion());
  const remembered = store?.get(key);
  // A GPU failure past its days is measured again, as if nothing were remembered.
  const known = remembered && 'gpuFailed' in remembered && !failureHolds(remembered) ? null : remembered;
  if (known && 'gpuFailed' in known) {
    const retry = failureExpiry(known).toISOString().slice(0, 10);
    return cpuWith(
      `the GPU failed on this model when measured on ${known.at.slice(0, 10)} (${known.gpuFailed}); it is measured again from ${retry}, or now with Measure Devices Again`,
    );
  }
  if (known?.device === 'cpu') return cpuWith(`measured on ${known.at.slice(0, 10)}: ${comparison(known)}`, known);
  if (known?.device === 'gpu') {
    void adapterName();
    try {
      const model = await OnnxCausalLM.load(file, config, { device: 'gpu' });
      return { model, report: await gpuReport(model, `measured on ${known.at.slice(0, 10)}: ${comparison(known)}`, known) };
    } catch (err) {
      opts.log?.(`the GPU could not be opened: ${errorMessage(err)}`);
      return cpuWith(`the GPU measured faster earlier cannot be opened now: ${gpuOpenFailure(err, support.api)}`);
    }
  }
  return measureBoth(file, config, opts, support.api, store, key);
}

/** `auto`'s first load of a model on a machine: both devices timed, the faster kept and remembered. */
async function measureBoth(
  file: string,
  config: Record<string, unknown>,
  opts: ChooseDeviceOptions,
  api: string,
  store: DeviceVerdicts | null,
  key: string,
): Promise<DeviceChoice> {
  const cpu = await OnnxCausalLM.load(file, config, { threads: opts.threads, device: 'cpu' });
  let gpu: OnnxCausalLM;
  try {
    gpu = await OnnxCausalLM.load(file, config, { device: 'gpu' });
  } catch (err) {
    // Not remembered: a driver installed later is found on the next load (a failed open costs milliseconds).
    opts.log?.(`the GPU could not be opened: ${errorMessage(err)}`);
    return { model: cpu, report: { setting: 'auto', device: 'cpu', reason: gpuOpenFailure(err, api) } };
  }
  void adapterName();
  const prefillTokens = Math.max(8, Math.min(PREFILL_TOKENS, Math.floor(opts.contextLength / 4)));
  opts.log?.(`measuring the CPU and the GPU (${api}) on this model once: a ${prefillTokens}-token prefill and ${DECODE_TOKENS} decode steps`);
  let cpuTiming: DeviceTiming;
  try {
    cpuTiming = await timeWorkload(cpu, prefillTokens, DECODE_TOKENS);
  } catch (err) {
    // The model fails on the CPU too: the load fails, with the CPU's error.
    await gpu.release();
    await cpu.release();
    throw err;
  }
  let verdict: DeviceVerdict;
  try {
    const gpuTiming = await timeWorkload(gpu, prefillTokens, DECODE_TOKENS);
    const device = fasterDevice(cpuTiming, gpuTiming, prefillTokens, DECODE_TOKENS);
    verdict = { device, cpu: cpuTiming, gpu: gpuTiming, prefillTokens, decodeTokens: DECODE_TOKENS, at: new Date().toISOString() };
  } catch (err) {
    // A lost device may not free cleanly. The failure is remembered, so later loads do not fail on the GPU again.
    await gpu.release().catch(() => undefined);
    const failed = errorMessage(err);
    opts.log?.(`the GPU failed while measured: ${failed}`);
    remember(store, key, { device: 'cpu', gpuFailed: failed, at: new Date().toISOString() }, opts.log);
    return { model: cpu, report: { setting: 'auto', device: 'cpu', reason: `the GPU failed while measured: ${failed}` } };
  }
  remember(store, key, verdict, opts.log);
  const reason = `measured now: ${comparison(verdict)}`;
  opts.log?.(`device: ${verdict.device.toUpperCase()}, ${comparison(verdict)}`);
  if (verdict.device === 'gpu') {
    await cpu.release();
    return { model: gpu, report: await gpuReportFor('auto', api, gpu, reason, verdict), warmed: true };
  }
  await gpu.release();
  // Why the GPU lost, when the graph's products could not run there at all.
  const why = gpu.gpuCpuProducts ? `${reason}; ${gpu.gpuCpuProducts}` : reason;
  return { model: cpu, report: { setting: 'auto', device: 'cpu', reason: why, measured: measurement(verdict) } };
}

/** Stores what `auto` found; a store that cannot be written is only logged (the choice stands). */
function remember(store: DeviceVerdicts | null, key: string, what: Remembered, log?: (line: string) => void): void {
  try {
    store?.set(key, what);
  } catch (err) {
    log?.(`the device verdict could not be saved (${errorMessage(err)}); it is measured again on the next load`);
  }
}

let adapterNames: Promise<string | undefined> | null = null;

/** The adapter's name for the device line, asked of the OS once per process (started while the GPU loads). */
function adapterName(): Promise<string | undefined> {
  adapterNames ??= gpuNames().then(describeGpuNames);
  return adapterNames;
}

/** The device line of a model on the GPU: the API, the adapter, where its KV cache lives, what still runs on the CPU. */
async function gpuReportFor(setting: DeviceSetting, api: string, model: OnnxCausalLM, reason: string, measured?: DeviceVerdict): Promise<DeviceReport> {
  return {
    setting,
    device: 'gpu',
    gpuApi: api,
    gpuAdapter: await adapterName(),
    gpuCache: model.deviceCacheWhyNot === null ? 'kept on the GPU' : `uploaded every run (${model.deviceCacheWhyNot})`,
    ...(model.gpuCpuProducts ? { gpuWarning: model.gpuCpuProducts } : {}),
    reason,
    ...(measured ? { measured: measurement(measured) } : {}),
  };
}

/** The GPU when it runs the workload GPU_MARGIN times faster than the CPU, else the CPU. */
export function fasterDevice(cpu: DeviceTiming, gpu: DeviceTiming, prefillTokens: number, decodeTokens: number): 'cpu' | 'gpu' {
  return workloadMs(gpu, prefillTokens, decodeTokens) * GPU_MARGIN < workloadMs(cpu, prefillTokens, decodeTokens) ? 'gpu' : 'cpu';
}

/**
 * Why the GPU could not be opened, in the user's words. Dawn's "no supported adapters" (no driver, no Vulkan
 * loader, a GPU the driver does not offer) becomes one sentence with what to install; anything else keeps
 * onnxruntime's message (the full text goes to the log).
 */
export function gpuOpenFailure(err: unknown, api: string): string {
  const msg = errorMessage(err);
  if (/WebGPU adapter|No supported adapters/i.test(msg)) {
    const hint = api === 'Vulkan' ? ' (Linux needs the Vulkan loader, libvulkan1, and a Vulkan driver for the GPU)' : '';
    return `no usable GPU: the graphics driver offers no ${api} adapter${hint}`;
  }
  return `no usable GPU: ${msg}`;
}

/** Milliseconds of the measured workload on one device. */
function workloadMs(t: DeviceTiming, prefillTokens: number, decodeTokens: number): number {
  return t.prefillMsPerToken * prefillTokens + t.decodeMsPerToken * decodeTokens;
}

/** "GPU 2.1x faster than the CPU (prefill 0.4 against 1.9 ms/token, decode ...)". */
export function comparison(v: Pick<DeviceVerdict, 'cpu' | 'gpu' | 'prefillTokens' | 'decodeTokens'>): string {
  const cpuMs = workloadMs(v.cpu, v.prefillTokens, v.decodeTokens);
  const gpuMs = workloadMs(v.gpu, v.prefillTokens, v.decodeTokens);
  const ratio = gpuMs <= cpuMs ? `GPU ${(cpuMs / gpuMs).toFixed(1)}x faster than the CPU` : `CPU ${(gpuMs / cpuMs).toFixed(1)}x faster than the GPU`;
  const f = (x: number) => x.toFixed(x < 10 ? 2 : 1);
  return (
    `${ratio} (prefill ${f(v.gpu.prefillMsPerToken)} against ${f(v.cpu.prefillMsPerToken)} ms/token, ` +
    `decode ${f(v.gpu.decodeMsPerToken)} against ${f(v.cpu.decodeMsPerToken)} ms/token, GPU first run ${Math.round(v.gpu.firstRunMs)} ms)`
  );
}

function measurement(v: DeviceVerdict): NonNullable<DeviceReport['measured']> {
  return { cpu: v.cpu, gpu: v.gpu, prefillTokens: v.prefillTokens, decodeTokens: v.decodeTokens };
}

/**
 * Times one device: a first run of the whole workload (shader compilation on a GPU), then the workload again
 * on a fresh cache. Token values do not change the time; the ids stay inside every vocabulary.
 */
export async function timeWorkload(model: OnnxCausalLM, prefillTokens: number, decodeTokens: number): Promise<DeviceTiming> {
  const ids = Array.from({ length: prefillTokens }, (_, i) => (i * 31 + 7) % Math.min(model.contract.vocab, 256));
  const run = async () => {
    const t0 = performance.now();
    let r = await model.forward([ids], model.emptyCache());
    const t1 = performance.now();
    for (let i = 0; i < decodeTokens; i++) r = await model.forward([[ids[i % ids.length]]], r.cache);
    return { prefillMs: t1 - t0, decodeMs: performance.now() - t1 };
  };
  const t0 = performance.now();
  await run();
  const firstRunMs = performance.now() - t0;
  const timed = await run();
  return { prefillMsPerToken: timed.prefillMs / prefillTokens, decodeMsPerToken: timed.decodeMs / decodeTokens, firstRunMs };
}

function ortVersion(): string {
  return env.versions?.node ?? env.versions?.common ?? 'unknown';
}
