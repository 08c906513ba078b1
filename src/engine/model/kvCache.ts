import { Tensor } from 'onnxruntime-node';
import type { IoContract } from './ioContract';

type KvData = Float32Array | Uint16Array;

/**
 * The past key/value tensors of the tokens already fed to the model, with those tokens' ids.
 * Layout of each tensor: [batch, kvHeads, length, headDim].
 */
export class KvCache {
  /**
   * Blocks of consecutive positions, each 2 * layers tensors; joined into one block when `tensors` is read. A
   * graph that keeps the whole cache on the GPU returns only each run's rows (exportCacheGraph.ts), which are
   * appended here without copying what came before.
   */
  private blocks: Tensor[][];
  /**
   * The cache whose first positions this one's are: itself, or the cache it was cropped from. A GPU copy of
   * that cache serves this one too (deviceCacheMirror.ts), cut to this length in the graph.
   */
  readonly lineage: KvCache;

  constructor(
    readonly contract: IoContract,
    /** Token ids fed so far (of batch row 0; all rows share the prompt). */
    readonly tokens: number[],
    /** 2 * layers tensors: key then value for each layer. */
    tensors: Tensor[],
    readonly batch: number,
    lineage?: KvCache,
  ) {
    this.blocks = [tensors];
    this.lineage = lineage ?? this;
  }

  static empty(contract: IoContract, batch = 1): KvCache {
    const tensors: Tensor[] = [];
    for (let i = 0; i < contract.layers * 2; i++) {
      tensors.push(new Tensor(contract.kvType, newData(contract.kvType, 0), [batch, contract.kvHeads, 0, contract.headDim]));
    }
    return new KvCache(contract, [], tensors, batch);
  }

  /** 2 * layers tensors: key then value for each layer, each [batch, kvHeads, length, headDim]. */
  get tensors(): Tensor[] {
    if (this.blocks.length > 1) this.blocks = [this.joinBlocks()];
    return this.blocks[0];
  }

  get length(): number {
    return this.blocks.reduce((n, b) => n + b[0].dims[2], 0);
  }

  get bytes(): number {
    return this.blocks.reduce((sum, b) => sum + b.reduce((s, t) => s + (t.data as KvData).byteLength, 0), 0);
  }

  /** Keeps the first n positions. */
  crop(n: number): KvCache {
    const len = this.length;
    if (n >= len) return this;
    const { kvHeads, headDim } = this.contract;
    const rows = this.batch * kvHeads;
    const tensors = this.tensors.map((t) => {
      const src = t.data as KvData;
      const dst = newData(this.contract.kvType, rows * n * headDim);
      for (let r = 0; r < rows; r++) dst.set(src.subarray(r * len * headDim, (r * len + n) * headDim), r * n * headDim);
      return new Tensor(this.contract.kvType, dst, [this.batch, kvHeads, n, headDim]);
    });
    return new KvCache(this.contract, this.tokens.slice(0, n), tensors, this.batch, this.lineage);
  }

  /** The first n positions, independent of this cache (its tensors are never written: crop already copies). */
  fork(n: number): KvCache {
    return this.crop(n);
  }

  /** A cache whose batch row j is row `rows[j]` of this one (beam search: expand and reorder). */
  gather(rows: number[]): KvCache {
    const { kvHeads, headDim } = this.contract;
    const per = kvHeads * this.length * headDim;
    const tensors = this.tensors.map((t) => {
      const src = t.data as KvData;
      const dst = newData(this.contract.kvType, rows.length * per);
      for (const [j, r] of rows.entries()) dst.set(src.subarray(r * per, (r + 1) * per), j * per);
      return new Tensor(this.contract.kvType, dst, [rows.length, kvHeads, this.length, headDim]);
    });
    return new KvCache(this.contract, this.tokens, tensors, rows.length);
  }

  /** The cache after feeding `fed` tokens, from the session's `present` outputs. */
  advance(present: Tensor[], fed: number[]): KvCache {
    return new KvCache(this.contract, this.tokens.concat(fed), present, this.batch);
  }

  /** The cache after feeding `fed` tokens, from only the rows the run added (2 * layers tensors of `fed.length` positions). */
  append(rows: Tensor[], fed: number[]): KvCache {
    const next = new KvCache(this.contract, this.tokens.concat(fed), rows, this.batch);
    next.blocks = [...this.blocks, rows];
    return next;
  }

  /** The blocks as one: each (batch row, head) is the concatenation of its positions in every block. */
  private joinBlocks(): Tensor[] {
    const { kvHeads, headDim, kvType } = this.contract;
    const rows = this.batch * kvHeads;
    const len = this.length;
    return this.blocks[0].map((_, k) => {
      const dst = newData(kvType, rows * len * headDim);
      let at = 0;
      for (const block of this.blocks) {
        const n = block[k].dims[2];
        const src = block[k].data as KvData;
        for (let r = 0; r < rows; r++) dst.set(src.subarray(r * n * headDim, (r + 1) * n * headDim), (r * len + at) * headDim);
        at += n;
      }
      return new Tensor(kvType, dst, [this.batch, kvHeads, len, headDim]);
    });
  }
}

function newData(type: 'float32' | 'float16', n: number): KvData {
  return type === 'float32' ? new Float32Array(n) : new Uint16Array(n);
}

/** Length of the longest common prefix of two id lists. */
export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
