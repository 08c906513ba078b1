import { Tensor } from 'onnxruntime-node';
import type { IoContract } from './ioContract';

type KvData = Float32Array | Uint16Array;

/** Consecutive positions of the cache: 2 * layers tensors, of which the first `used` positions belong to it. */
interface Block {
  tensors: Tensor[];
  used: number;
}

/**
 * The past key/value tensors of the tokens already fed to the model, with those tokens' ids.
 * Layout of each tensor: [batch, kvHeads, length, headDim].
 *
 * Held as blocks of positions, joined into one tensor per layer and kind only when `tensors` is read: a graph
 * that keeps the whole cache on the GPU returns only each run's rows (exportCacheGraph.ts), appended here
 * without copying what came before, and a crop only shortens the blocks' use. Tensors are never written, so
 * caches share blocks freely.
 */
export class KvCache {
  private blocks: Block[];
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
    this.blocks = [{ tensors, used: tensors[0].dims[2] }];
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
    const [first] = this.blocks;
    if (this.blocks.length > 1 || first.used < first.tensors[0].dims[2]) this.blocks = [{ tensors: this.joinBlocks(), used: this.length }];
    return this.blocks[0].tensors;
  }

  get length(): number {
    return this.blocks.reduce((n, b) => n + b.used, 0);
  }

  /** The bytes of this cache's positions (blocks shared with other caches are counted for each). */
  get bytes(): number {
    const { kvHeads, headDim, layers, kvType } = this.contract;
    return this.length * this.batch * kvHeads * headDim * 2 * layers * (kvType === 'float32' ? 4 : 2);
  }

  /** Keeps the first n positions (nothing is copied until the tensors are read). */
  crop(n: number): KvCache {
    if (n >= this.length) return this;
    const next = new KvCache(this.contract, this.tokens.slice(0, n), this.blocks[0].tensors, this.batch, this.lineage);
    next.blocks = usedUpTo(this.blocks, n);
    return next;
  }

  /** The first n positions, independent of this cache (tensors are never written, so sharing them is safe). */
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
    next.blocks = [...this.blocks, ...next.blocks];
    return next;
  }

  /** The used positions of every block as one: each (batch row, head) is the concatenation of its blocks' rows. */
  private joinBlocks(): Tensor[] {
    const { kvHeads, headDim, kvType } = this.contract;
    const rows = this.batch * kvHeads;
    const len = this.length;
    return this.blocks[0].tensors.map((_, k) => {
      const dst = newData(kvType, rows * len * headDim);
      let at = 0;
      for (const { tensors, used } of this.blocks) {
        const n = tensors[k].dims[2];
        const src = tensors[k].data as KvData;
        for (let r = 0; r < rows; r++) dst.set(src.subarray(r * n * headDim, (r * n + used) * headDim), (r * len + at) * headDim);
        at += used;
      }
      return new Tensor(kvType, dst, [this.batch, kvHeads, len, headDim]);
    });
  }
}

/** The blocks that hold the first n positions, the last one's use cut to them. */
function usedUpTo(blocks: readonly Block[], n: number): Block[] {
  const out: Block[] = [];
  let left = n;
  for (const b of blocks) {
    if (left <= 0) break;
    out.push({ tensors: b.tensors, used: Math.min(b.used, left) });
    left -= b.used;
  }
  // A crop to 0 keeps one empty block, so a cache always has its tensors' shapes at hand.
  return out.length ? out : [{ tensors: blocks[0].tensors, used: 0 }];
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
