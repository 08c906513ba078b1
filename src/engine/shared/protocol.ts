import type { DecodeOptions } from './decodeOptions';
import type { DeviceCacheCounts, DeviceReport } from './device';
import type { EngineOptions } from './engineOptions';
import type { Prompt } from './prompt';
import type { FirstLine, GenerateResult, ModelInfo } from './types';

export interface WorkerStats {
  pid: number;
  rssBytes: number;
  heapUsedBytes: number;
  cachedTokens: number;
  /** Memory on transparent huge pages (Linux; null elsewhere): the weights, when the worker got them (host/hugePageMalloc.ts). */
  hugePageBytes: number | null;
  /** The glibc tunables the worker runs with, as its environment holds them (null when unset). */
  glibcTunables: string | null;
  /** On the GPU, with the KV cache kept there: runs that used its copy and runs that uploaded it (null elsewhere). */
  gpuCache: DeviceCacheCounts | null;
}

/** Messages from the client (extension host / CLI thread) to the inference worker. */
export type ToWorker =
  | { type: 'load'; id: number; modelDir: string; options: EngineOptions }
  | { type: 'generate'; id: number; prompt: Prompt; options: Partial<DecodeOptions>; stream: boolean; prefillChunk?: number; notifyStart?: boolean }
  | { type: 'tokenize'; id: number; text: string }
  | { type: 'cancel'; id: number }
  | { type: 'reset'; id: number }
  | { type: 'shutdown'; id: number }
  | { type: 'stats'; id: number };

/** Messages from the worker back. Every request id gets exactly one `done` or `error`; `device` answers no request. */
export type FromWorker =
  | { type: 'loaded'; id: number; info: ModelInfo }
  /** The request's turn came (requests run one at a time): sent only to requests that asked (`notifyStart`). */
  | { type: 'start'; id: number }
  | { type: 'partial'; id: number; text: string }
  | { type: 'line'; id: number; line: FirstLine }
  | { type: 'done'; id: number; result: GenerateResult }
  | { type: 'tokens'; id: number; ids: number[] }
  | { type: 'ok'; id: number }
  | { type: 'stats'; id: number; stats: WorkerStats }
  | { type: 'error'; id: number; message: string; name: string }
  /** Unasked (id 0): the GPU failed and the model moved to the CPU (ModelInfo.device changes to this). */
  | { type: 'device'; id: 0; report: DeviceReport };
