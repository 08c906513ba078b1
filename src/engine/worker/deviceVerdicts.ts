import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ComputeDevice, DeviceTiming } from '../shared/device';

/** What `auto` measured for one model file on one machine (deviceChoice.ts). */
export interface DeviceVerdict {
  device: ComputeDevice;
  cpu: DeviceTiming;
  gpu: DeviceTiming;
  prefillTokens: number;
  decodeTokens: number;
  /** ISO date of the measurement. */
  at: string;
}

/**
 * A GPU that failed while `auto` measured it on one model (a kernel the device cannot compile, out of memory):
 * the model stays on the CPU on later loads instead of failing on the GPU again each time, for
 * GPU_FAILURE_KEPT_DAYS or until Measure Devices Again. A GPU that cannot be opened at all is not remembered:
 * that costs milliseconds, and a driver installed later is found on the next load.
 */
export interface GpuFailure {
  device: 'cpu';
  gpuFailed: string;
  /** ISO date of the failure. */
  at: string;
}

export type Remembered = DeviceVerdict | GpuFailure;

/**
 * How long a GPU failure keeps a model on the CPU. A failure cannot be told transient (a device lost once, memory
 * another app held) from lasting (a kernel the device lacks) by its message, so neither is kept for ever: a
 * lasting one costs one failed measurement (seconds, at a load) a week; a transient one no longer pins the model.
 */
export const GPU_FAILURE_KEPT_DAYS = 7;

/** The date from which a remembered GPU failure no longer holds and the model is measured again. */
export function failureExpiry(failure: GpuFailure): Date {
  return new Date(Date.parse(failure.at) + GPU_FAILURE_KEPT_DAYS * 86_400_000);
}

/** Whether a remembered GPU failure still keeps the model on the CPU at `now` (an unreadable date does not). */
export function failureHolds(failure: GpuFailure, now = Date.now()): boolean {
  const until = failureExpiry(failure).getTime();
  return Number.isFinite(until) && now < until;
}

interface VerdictFile {
  version: 1;
  verdicts: Record<string, Remembered>;
}

/** Verdicts kept at most (the oldest measured go first): one per model file and machine. */
const MAX_VERDICTS = 64;

/**
 * How Ghostline runs a model on the GPU: a verdict measured under another revision is measured again, as its
 * GPU timing no longer holds. 2: the KV cache stays on the GPU between runs (model/deviceCacheGraph.ts). 3: for
 * Hugging Face exports too (model/exportCacheGraph.ts).
 */
export const GPU_PATH_REVISION = 3;

/**
 * The key a verdict is remembered under: the model file (path, size, modification time), the onnxruntime
 * version, Ghostline's GPU path and the machine (platform, CPU model, core count, OS release). The OS release is
 * there because macOS ships its GPU drivers with it, and Windows' major updates often bring new ones. A driver
 * installed alone is not in it: Ghostline: Measure Devices Again (or deleting the file) measures afresh.
 */
export function verdictKey(onnxFile: string, ortVersion: string, gpuPath = GPU_PATH_REVISION): string {
  let stamp = 'missing';
  try {
    const st = fs.statSync(onnxFile);
    stamp = `${st.size}@${Math.round(st.mtimeMs)}`;
  } catch {
    // A file that vanished keys as missing: no verdict matches it.
  }
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  const machine = [`${process.platform}-${process.arch}`, `${cpu} x${os.availableParallelism()}`, `OS ${os.release()}`];
  return [path.resolve(onnxFile), stamp, `onnxruntime ${ortVersion}`, `GPU path ${gpuPath}`, ...machine].join(' | ');
}

/** A store of verdicts in one JSON file; a missing, unreadable or foreign file reads as empty. */
export class DeviceVerdicts {
  constructor(private readonly file: string) {}

  get(key: string): Remembered | null {
    return this.read().verdicts[key] ?? null;
  }

  /** Remembers `verdict`; a store that cannot be written is only logged by the caller (the choice stands). */
  set(key: string, verdict: Remembered): void {
    const data = this.read();
    data.verdicts[key] = verdict;
    const kept = Object.entries(data.verdicts)
      .sort((a, b) => b[1].at.localeCompare(a[1].at))
      .slice(0, MAX_VERDICTS);
    data.verdicts = Object.fromEntries(kept);
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    // Written aside and renamed: two windows measuring at once never leave a half-written file.
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(data, null, 1)}\n`);
    fs.renameSync(tmp, this.file);
  }

  private read(): VerdictFile {
    try {
      const data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<VerdictFile>;
      if (data?.version === 1 && data.verdicts && typeof data.verdicts === 'object') return data as VerdictFile;
    } catch {
      // Missing or damaged: measured again.
    }
    return { version: 1, verdicts: {} };
  }
}
