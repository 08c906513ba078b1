import type { DeviceSetting } from './device';

/**
 * Default of EngineOptions.moveCachedRunsOverMs and of the ghostline.engine.moveCachedRunsOverMs setting. Moved runs
 * change some suggestions (bench/results/moved-runs.json): worth it against a wait of seconds, not of a few
 * hundred milliseconds.
 */
export const MOVE_CACHED_RUNS_OVER_MS = 1500;

/** How the worker loads and runs a model: options the extension host sends across the process boundary. */
export interface EngineOptions {
  /** Intra-op threads; 0 picks a default from the CPU count. */
  threads?: number;
  /** A file name (or path relative to the folder) to use instead of the preferred one. */
  onnxFile?: string;
  /** Prompt tokens per prefill call: a cancel waits for at most one chunk. */
  prefillChunk?: number;
  /**
   * Reuse runs of a cached prompt that moved (a moved window start, FIM anchor or edit above), their keys turned
   * to the new positions, as llama.cpp's --cache-reuse does, when prefilling them exactly would take longer than
   * this many milliseconds (default 1500; 0: always; a negative number: never). The moved tokens' cache was
   * computed after other text, so a suggestion can differ from a cold run's (bench/results/moved-runs.json):
   * worth it against a wait of seconds, not of a few hundred milliseconds. Lean graphs only.
   */
  moveCachedRunsOverMs?: number;
  /** Where the model runs: auto (default: measured once per model and machine), cpu or gpu (shared/device.ts). */
  device?: DeviceSetting;
  /** The JSON file where `auto` remembers its verdicts; without one it measures on every load. */
  deviceVerdictFile?: string;
}
