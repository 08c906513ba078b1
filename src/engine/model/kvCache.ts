import { Tensor } from 'onnxruntime-node';
import type { IoContract } from './ioContract';

type KvData = Float32Array | Uint16Array;

/**
 * The past key/value tensors of the tokens already fed to the model, with those tokens' ids.
 * Layout of each tensor: [batch, kvHeads, length, headDim].
 */
export class KvCache {
  constructor(
    readonly contract: IoContract,
    /** Token ids fed so far (of batch row 0; all rows share the prompt). */
    readonly tokens: number[],
    /** 2 * layers tensors: key then value for each layer. */
    readonly tensors: Tensor[],
    readonly batch: number,
  ) {}

  static empty(contract: IoContract, batch = 1): KvCache {
    const tensors: Tensor[] = [];
    for (let i = 0; i < contract.layers * 2; i++) {
      tensors.push(new Tensor(contract.kvType, newData(contract.kvType, 0), [batch, contract.kvHeads, 0, contract.headDim]));
    }
    return new KvCache(contract, [], tensors, batch);
  }

  get length(): number {
    return this.tensors[0].dims[2];
  }

  get bytes(): number {
    return this.tensors.reduce((s, t) => s + (t.data as KvData).byteLength, 0);
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
    return new KvCache(this.contract, this.tokens.slice(0, n), tensors, this.batch);
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
