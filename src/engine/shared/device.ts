/**
 * Where the model runs. `auto` measures both devices on the first load of a model on a machine and keeps the
 * faster (worker/deviceChoice.ts); `gpu` asks for the GPU and falls back to the CPU with a message when there
 * is none; `cpu` never touches the GPU.
 */
export const DEVICE_SETTINGS = ['auto', 'cpu', 'gpu'] as const;
export type DeviceSetting = (typeof DEVICE_SETTINGS)[number];

/** A device a session runs on: the CPU, or the GPU through onnxruntime's WebGPU provider. */
export type ComputeDevice = 'cpu' | 'gpu';

/** One device's timing of the same short prefill and decode (deviceChoice.ts). */
export interface DeviceTiming {
  /** Milliseconds per prompt token of a prefill of `prefillTokens`. */
  prefillMsPerToken: number;
  /** Milliseconds per decoded token. */
  decodeMsPerToken: number;
  /** The first run's milliseconds (on a GPU, mostly shader compilation; paid on every load). */
  firstRunMs: number;
}

/** What crossed to the GPU for the KV cache since the model loaded (model/deviceCacheMirror.ts). */
export interface DeviceCacheCounts {
  /** Runs that fed the cache from the GPU's own copy: nothing uploaded. */
  kept: number;
  /** Runs that uploaded the host's cache (a first run, a store changed on the host). */
  uploaded: number;
  uploadedBytes: number;
}

/** Which device the model runs on, and why: what Show Stats and the status bar tooltip say. */
export interface DeviceReport {
  setting: DeviceSetting;
  device: ComputeDevice;
  /** The graphics API the WebGPU provider drives on this platform (Metal, Direct3D 12, Vulkan), when on the GPU. */
  gpuApi?: string;
  /** On the GPU: the display adapter the OS lists ("one of A, B" when it lists several; worker/gpuNames.ts). */
  gpuAdapter?: string;
  /** On the GPU: what of the model still runs on the CPU there (model/gpuKernels.ts), and what to pick instead. */
  gpuWarning?: string;
  /** On the GPU: where the KV cache lives between runs ("kept on the GPU", or uploaded every run and why). */
  gpuCache?: string;
  /** One sentence: measured now, remembered from an earlier measurement, asked for, or why not the GPU. */
  reason: string;
  /** The measurement behind an `auto` verdict, when one was made or remembered. */
  measured?: { cpu: DeviceTiming; gpu: DeviceTiming; prefillTokens: number; decodeTokens: number };
  /** Set when the GPU failed during this session and the model moved to the CPU. */
  fellBack?: string;
}

/** The graphics API Dawn (onnxruntime's WebGPU) uses on a platform, or null where onnxruntime-node has no WebGPU. */
export function gpuApiFor(platform: string, arch: string): string | null {
  if (platform === 'darwin') return 'Metal';
  if (platform === 'win32') return 'Direct3D 12';
  if (platform === 'linux' && arch === 'x64') return 'Vulkan';
  return null;
}

/**
 * One line for logs, Show Stats and the tooltip: "GPU (WebGPU on Vulkan, NVIDIA GeForce RTX 3060, KV cache kept
 * on the GPU): measured now: 2.1x faster than the CPU".
 */
export function describeDevice(r: DeviceReport): string {
  const adapter = r.device === 'gpu' && r.gpuAdapter ? `, ${r.gpuAdapter}` : '';
  const cache = r.device === 'gpu' && r.gpuCache ? `, KV cache ${r.gpuCache}` : '';
  const where = r.device === 'gpu' ? `GPU (WebGPU on ${r.gpuApi ?? 'the GPU'}${adapter}${cache})` : 'CPU';
  const warning = r.device === 'gpu' && r.gpuWarning ? `; ${r.gpuWarning}` : '';
  return `${where}: ${r.fellBack ?? r.reason}${warning}`;
}

/** Show Stats: how often the GPU's copy of the KV cache served a run ("KV cache on the GPU for 95 of 100 runs, 4 MB uploaded"). */
export function describeGpuCache(c: DeviceCacheCounts): string {
  const mb = c.uploadedBytes / 1e6;
  return `KV cache on the GPU for ${c.kept} of ${c.kept + c.uploaded} runs, ${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB uploaded`;
}
