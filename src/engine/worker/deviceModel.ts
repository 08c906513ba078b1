import type { DeviceReport } from '../shared/device';
import { errorMessage } from '../shared/errors';
import type { AnyKvCache, ForwardResult, OnnxCausalLM } from '../model/onnxModel';

/** The warm-up's prefill: long enough for the multi-token kernels a prompt uses, short enough to cost little. */
const WARM_UP_TOKENS = 16;

/** The model calls the engine makes, on whichever session is active. */
export type CausalModel = Pick<OnnxCausalLM, 'forward' | 'emptyCache' | 'release' | 'contract' | 'file' | 'deviceCacheStats'>;

/**
 * The model on its chosen device, moved to the CPU for the rest of the session when a GPU run fails (device
 * lost, out of memory, a driver error). The failed pass is run again on the CPU with the same cache: caches
 * live in the worker's memory (the GPU session copies them in per pass), so nothing computed is lost and the
 * request that met the failure still gets its answer.
 */
export class DeviceModel implements CausalModel {
  constructor(
    private active: CausalModel & { device: OnnxCausalLM['device'] },
    readonly report: DeviceReport,
    private readonly openCpu: () => Promise<CausalModel & { device: OnnxCausalLM['device'] }>,
    /** Told once, when the model moves to the CPU. */
    private readonly onFallBack: (report: DeviceReport) => void = () => {},
  ) {}

  get contract(): OnnxCausalLM['contract'] {
    return this.active.contract;
  }

  get file(): string {
    return this.active.file;
  }

  get deviceCacheStats(): OnnxCausalLM['deviceCacheStats'] {
    return this.active.deviceCacheStats;
  }

  emptyCache(batch?: number): AnyKvCache {
    return this.active.emptyCache(batch);
  }

  async forward(tokens: number[][], cache: AnyKvCache, keep?: number): Promise<ForwardResult> {
    try {
      return await this.active.forward(tokens, cache, keep);
    } catch (err) {
      if (this.active.device !== 'gpu') throw err;
      await this.moveToCpu(errorMessage(err));
      return this.active.forward(tokens, cache, keep);
    }
  }

  async release(): Promise<void> {
    await this.active.release();
  }

  /**
   * On the GPU, a short prefill and one decode step at load, so that the first suggestion does not wait for the
   * shaders they compile (seconds; bench:device measures the first request with and without it). A GPU that
   * fails here moves to the CPU now, with its one message, instead of at the first keystroke.
   * Resolves with the milliseconds taken, or null on the CPU (nothing to compile).
   */
  async warmUp(): Promise<number | null> {
    if (this.active.device !== 'gpu') return null;
    const t0 = performance.now();
    const ids = Array.from({ length: WARM_UP_TOKENS }, (_, i) => i % this.contract.vocab);
    const r = await this.forward([ids], this.emptyCache());
    await this.forward([[ids[0]]], r.cache);
    return performance.now() - t0;
  }

  private async moveToCpu(why: string): Promise<void> {
    const failed = this.active;
    this.active = await this.openCpu();
    this.report.device = 'cpu';
    this.report.gpuApi = undefined;
    this.report.gpuAdapter = undefined;
    this.report.gpuWarning = undefined;
    this.report.gpuCache = undefined;
    this.report.fellBack = `the GPU failed (${why}); the model runs on the CPU for the rest of this session`;
    this.onFallBack(this.report);
    // A lost device may not free cleanly: its release must not fail the request the CPU just answered.
    await failed.release().catch(() => undefined);
  }
}
