import type { Tensor } from 'onnxruntime-node';
import type { DeviceCacheCounts } from '../shared/device';
import type { LeanStore } from './leanCache';
import { leanNames } from './leanContract';

/**
 * The GPU's copy of one lean store: the `cache_out.*` tensors of the last run (deviceCacheGraph.ts), which
 * equal the host store after that run's rows were written (LeanStore.write). They are fed back while the store
 * is the same object at the same version; any other write on the host (a moved run, a copy into a new store)
 * makes the host's buffers go up once more. One copy is held, for the store the last run used: a session that
 * switches between kept caches uploads on each switch, as every run did before. Runs are sequential (the engine
 * runs one request at a time), so a copy is never replaced while a run reads it.
 */
export class DeviceCacheMirror {
  private held: { store: LeanStore; version: number; feeds: Record<string, Tensor> } | null = null;
  readonly stats: DeviceCacheCounts = { kept: 0, uploaded: 0, uploadedBytes: 0 };

  constructor(private readonly layers: number) {}

  /** The output names to leave on the GPU. */
  static outputNames(layers: number): string[] {
    return Array.from({ length: layers }, (_, i) => [leanNames.cacheOutKey(i), leanNames.cacheOutValue(i)]).flat();
  }

  /** The GPU's cache feeds for `store` when they are current, else null (and the host's buffers go up). */
  feedsFor(store: LeanStore): Record<string, Tensor> | null {
    const h = this.held;
    if (h && h.store === store && h.version === store.version) {
      this.stats.kept++;
      return h.feeds;
    }
    this.stats.uploaded++;
    this.stats.uploadedBytes += store.bytes;
    return null;
  }

  /** Holds a run's `cache_out.*` outputs as the copy of `store`, which the run's rows were just written into. */
  keep(store: LeanStore, outputs: Record<string, Tensor>): void {
    const feeds: Record<string, Tensor> = {};
    for (let i = 0; i < this.layers; i++) {
      feeds[leanNames.cacheKey(i)] = outputs[leanNames.cacheOutKey(i)];
      feeds[leanNames.cacheValue(i)] = outputs[leanNames.cacheOutValue(i)];
    }
    this.drop();
    this.held = { store, version: store.version, feeds };
  }

  /** Frees the GPU copy (GPU buffers are not garbage collected in time: each is a whole cache). */
  drop(): void {
    if (!this.held) return;
    for (const t of Object.values(this.held.feeds)) t.dispose();
    this.held = null;
  }
}
