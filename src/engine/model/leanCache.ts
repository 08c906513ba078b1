import { Tensor } from 'onnxruntime-node';
import type { IoContract } from './ioContract';
import { leanNames } from './leanContract';
import type { MovedRun } from './movedRuns';

/** Capacity grows in steps of this many positions: attention reads the whole capacity, so keep slack small. */
const CAP_STEP = 256;

/**
 * The KV buffers of the lean contract (leanContract.ts): per layer, keys [batch, kvHeads, headDim, cap] and
 * values [batch, kvHeads, cap, headDim], fed to the graph as inputs (onnxruntime does not copy inputs) and
 * filled by the runtime from the graph's `new_kv` rows. Cropping only moves the length: nothing is copied.
 */
class LeanStore {
  readonly keys: Float32Array[] = [];
  readonly values: Float32Array[] = [];
  private feedsCache: Record<string, Tensor> | null = null;
  /** Counts writes: a copy of the store kept elsewhere (the GPU's, deviceCacheMirror.ts) is current while it matches. */
  version = 0;

  constructor(
    readonly contract: IoContract,
    readonly batch: number,
    readonly cap: number,
  ) {
    const size = batch * contract.kvHeads * contract.headDim * cap;
    for (let i = 0; i < contract.layers; i++) {
      this.keys.push(new Float32Array(size));
      this.values.push(new Float32Array(size));
    }
  }

  get bytes(): number {
    return this.keys.length * 2 * this.keys[0].byteLength;
  }

  /** The cache inputs; Tensor wrappers are made once per store (they wrap, not copy, the buffers). */
  feeds(): Record<string, Tensor> {
    this.feedsCache ??= this.makeFeeds(this.cap);
    return this.feedsCache;
  }

  /** Zero-capacity cache inputs: a first chunk attends to nothing cached, so it skips the empty slots. */
  emptyFeeds(): Record<string, Tensor> {
    return this.makeFeeds(0);
  }

  private makeFeeds(cap: number): Record<string, Tensor> {
    const { kvHeads: h, headDim: d, layers } = this.contract;
    const f: Record<string, Tensor> = {};
    for (let i = 0; i < layers; i++) {
      const keys = cap ? this.keys[i] : new Float32Array(0);
      const values = cap ? this.values[i] : new Float32Array(0);
      f[leanNames.cacheKey(i)] = new Tensor('float32', keys, [this.batch, h, d, cap]);
      f[leanNames.cacheValue(i)] = new Tensor('float32', values, [this.batch, h, cap, d]);
    }
    return f;
  }

  /**
   * A store with room for `cap` positions holding the first `length` positions of batch rows `rows` of this
   * one (growth keeps all rows; beam search reorders them).
   */
  copyTo(cap: number, length: number, rows: number[] = [...Array(this.batch).keys()]): LeanStore {
    const { kvHeads: h, headDim: d } = this.contract;
    const dst = new LeanStore(this.contract, rows.length, cap);
    for (let i = 0; i < this.keys.length; i++) {
      rows.forEach((r, j) => {
        for (let head = 0; head < h; head++) {
          const srcRow = r * h + head;
          const dstRow = j * h + head;
          // keys: one run of `length` per (row, head, dim)
          for (let k = 0; k < d; k++) {
            const from = (srcRow * d + k) * this.cap;
            dst.keys[i].set(this.keys[i].subarray(from, from + length), (dstRow * d + k) * cap);
          }
          // values: one run of length * headDim per (row, head)
          const from = srcRow * this.cap * d;
          dst.values[i].set(this.values[i].subarray(from, from + length * d), dstRow * cap * d);
        }
      });
    }
    return dst;
  }

  /**
   * Copies positions [from, from + length) of batch row 0 of `src` to [to, to + length) here. With `invFreq`,
   * keys are turned by the rotary angle of the move, (to - from) x each frequency: a key stored after rotary at
   * position p then reads as if computed at p + (to - from) (rotations compose), as llama.cpp's KV shift does.
   * Values carry no position.
   */
  copyMoved(src: LeanStore, from: number, to: number, length: number, invFreq: Float64Array | null): void {
    const { kvHeads: h, headDim: d, layers } = this.contract;
    const half = d / 2;
    this.version++;
    const delta = to - from;
    const cos = new Float64Array(half);
    const sin = new Float64Array(half);
    for (let j = 0; j < half; j++) {
      cos[j] = invFreq && delta !== 0 ? Math.cos(delta * invFreq[j]) : 1;
      sin[j] = invFreq && delta !== 0 ? Math.sin(delta * invFreq[j]) : 0;
    }
    for (let i = 0; i < layers; i++) {
      const sk = src.keys[i];
      const dk = this.keys[i];
      for (let head = 0; head < h; head++) {
        for (let j = 0; j < half; j++) {
          const s1 = (head * d + j) * src.cap + from;
          const s2 = (head * d + j + half) * src.cap + from;
          const d1 = (head * d + j) * this.cap + to;
          const d2 = (head * d + j + half) * this.cap + to;
          const c = cos[j];
          const sn = sin[j];
          for (let t = 0; t < length; t++) {
            const x1 = sk[s1 + t];
            const x2 = sk[s2 + t];
            dk[d1 + t] = x1 * c - x2 * sn;
            dk[d2 + t] = x2 * c + x1 * sn;
          }
        }
        const v = (head * src.cap + from) * d;
        this.values[i].set(src.values[i].subarray(v, v + length * d), (head * this.cap + to) * d);
      }
    }
  }

  /** Writes the graph's new rows (new_kv [2 * layers * batch, seq, kvHeads * headDim]) at positions from `at`. */
  write(newKv: Float32Array, seq: number, at: number): void {
    const { kvHeads: h, headDim: d, layers } = this.contract;
    this.version++;
    const rowLen = h * d;
    const cap = this.cap;
    for (let i = 0; i < layers; i++) {
      const keys = this.keys[i];
      const values = this.values[i];
      for (let b = 0; b < this.batch; b++) {
        for (let s = 0; s < seq; s++) {
          const kSrc = ((2 * i * this.batch + b) * seq + s) * rowLen;
          const vSrc = (((2 * i + 1) * this.batch + b) * seq + s) * rowLen;
          const pos = at + s;
          for (let head = 0; head < h; head++) {
            const row = b * h + head;
            const kBase = row * d * cap + pos;
            for (let k = 0; k < d; k++) keys[kBase + k * cap] = newKv[kSrc + head * d + k];
            values.set(newKv.subarray(vSrc + head * d, vSrc + head * d + d), (row * cap + pos) * d);
          }
        }
      }
    }
  }
}

/** The lean KV cache: a store plus how many of its positions hold the tokens fed so far. */
export class LeanKvCache {
  constructor(
    readonly store: LeanStore,
    readonly tokens: number[],
    readonly length: number,
  ) {}

  static empty(contract: IoContract, batch = 1): LeanKvCache {
    return new LeanKvCache(new LeanStore(contract, batch, CAP_STEP), [], 0);
  }

  get batch(): number {
    return this.store.batch;
  }

  get bytes(): number {
    return this.store.bytes;
  }

  /** Keeps the first n positions (no copy: later writes overwrite the rest). */
  crop(n: number): LeanKvCache {
    if (n >= this.length) return this;
    return new LeanKvCache(this.store, this.tokens.slice(0, n), n);
  }

  /** The first n positions in a store of their own: what is written to either later leaves the other as it is. */
  fork(n: number): LeanKvCache {
    const keep = Math.min(n, this.length);
    return new LeanKvCache(this.store.copyTo(this.store.cap, keep), this.tokens.slice(0, keep), keep);
  }

  gather(rows: number[]): LeanKvCache {
    return new LeanKvCache(this.store.copyTo(this.store.cap, this.length, rows), this.tokens, this.length);
  }

  /**
   * A cache for `prompt` (batch 1) holding `source`'s first `shared` positions as they are and the moved runs of
   * `runSource` (by default `source`) at their new positions (keys turned by `invFreq`); its length is `shared`,
   * and `through` extends it over each run once the tokens before the run are prefilled.
   */
  static assemble(
    source: LeanKvCache,
    shared: number,
    runs: readonly MovedRun[],
    prompt: readonly number[],
    invFreq: Float64Array,
    runSource: LeanKvCache = source,
  ): LeanKvCache {
    const store = new LeanStore(source.store.contract, 1, Math.ceil(prompt.length / CAP_STEP) * CAP_STEP);
    store.copyMoved(source.store, 0, 0, shared, null);
    for (const r of runs) store.copyMoved(runSource.store, r.from, r.to, r.length, invFreq);
    return new LeanKvCache(store, prompt.slice(0, shared), shared);
  }

  /** This cache's store taken to cover the first `n` tokens of `prompt` (a moved run already written there). */
  through(prompt: readonly number[], n: number): LeanKvCache {
    if (n > this.store.cap) throw new Error(`a cache of ${this.store.cap} positions cannot hold ${n}`);
    return new LeanKvCache(this.store, prompt.slice(0, n), n);
  }

  /** A store with room for `total` positions: this one, or a larger copy. */
  storeFor(total: number): LeanStore {
    if (total <= this.store.cap) return this.store;
    return this.store.copyTo(Math.ceil(total / CAP_STEP) * CAP_STEP, this.length);
  }
}

/** attention_bias [seq, cap + seq]: cache slots valid below `past`, new tokens causal. */
export function attentionBias(past: number, seq: number, cap: number): Float32Array {
  const width = cap + seq;
  const bias = new Float32Array(seq * width).fill(-Infinity);
  for (let i = 0; i < seq; i++) {
    bias.fill(0, i * width, i * width + past);
    bias.fill(0, i * width + cap, i * width + cap + i + 1);
  }
  return bias;
}
