import type { Tensor } from 'onnxruntime-node';
import type { DeviceCacheCounts } from '../shared/device';
import type { DeviceCacheVariant } from './deviceCacheVariant';

/**
 * The GPU's copy of one host-side cache: the outputs of the last run of a device cache variant
 * (deviceCacheVariant.ts), which hold what the host's cache holds after that run. They are fed back while the
 * host asks for the same owner at the same version: for a lean graph its store (LeanStore.version counts the
 * host's writes), for an export the cache its rows were cut from (KvCache.lineage; the export's graph cuts the
 * copy to the mask's length). Anything else makes the host's cache go up once more. One copy is held, for the
 * owner the last run used: a session that switches between kept caches uploads on each switch, as every run did
 * before. Runs are sequential (the engine runs one request at a time), so a copy is never replaced while a run
 * reads it.
 */
export class DeviceCacheMirror {
  private held: { owner: object; version: number; feeds: Record<string, Tensor> } | null = null;
  readonly stats: DeviceCacheCounts = { kept: 0, uploaded: 0, uploadedBytes: 0 };

  constructor(private readonly kept: DeviceCacheVariant['kept']) {}

  /** The output names to leave on the GPU. */
  get outputNames(): string[] {
    return this.kept.map((k) => k.output);
  }

  /** The GPU's cache feeds for `owner` when they are current, else null (and `bytes` of the host's cache go up). */
  feedsFor(owner: object, version: number, bytes: number): Record<string, Tensor> | null {
    const h = this.held;
    if (h && h.owner === owner && h.version === version) {
      this.stats.kept++;
      return h.feeds;
    }
    this.stats.uploaded++;
    this.stats.uploadedBytes += bytes;
    return null;
  }

  /** Holds a run's outputs as the copy of `owner` (at `version`), whose host side the run's rows were just added to. */
  keep(owner: object, version: number, outputs: Record<string, Tensor>): void {
    const feeds: Record<string, Tensor> = {};
    for (const { output, input } of this.kept) feeds[input] = outputs[output];
    this.drop();
    this.held = { owner, version, feeds };
  }

  /** Frees the GPU copy (GPU buffers are not garbage collected in time: each is a whole cache). */
  drop(): void {
    if (!this.held) return;
    for (const t of Object.values(this.held.feeds)) t.dispose();
    this.held = null;
  }
}
