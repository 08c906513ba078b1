// KvCache's blocks (kvCache.ts): positions appended as blocks, crops that only shorten their use, and tensors
// joined when read. Every value encodes its (batch row, head, position, dim), so a row put in the wrong place
// shows; the expected tensors are built position by position from the same encoding.
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Tensor } from 'onnxruntime-node';
import type { IoContract } from '../../src/engine/model/ioContract';
import { KvCache } from '../../src/engine/model/kvCache';

const H = 2;
const D = 3;
const contract = (kvType: 'float32' | 'float16') => ({ layers: 1, kvHeads: H, headDim: D, kvType }) as IoContract;

/** The value at (batch row b, head h, absolute position p, dim d), for layer tensor k. */
const value = (k: number, b: number, h: number, p: number, d: number) => k * 10000 + b * 1000 + h * 100 + p * 4 + d;

/** 2 tensors (key, value) holding absolute positions [from, from + n) of the rows `source` names. */
function rows(kvType: 'float32' | 'float16', source: number[], from: number, n: number): Tensor[] {
  const batch = source.length;
  return [0, 1].map((k) => {
    const data = kvType === 'float32' ? new Float32Array(batch * H * n * D) : new Uint16Array(batch * H * n * D);
    for (let b = 0; b < batch; b++)
      for (let h = 0; h < H; h++)
        for (let p = 0; p < n; p++) for (let d = 0; d < D; d++) data[((b * H + h) * n + p) * D + d] = value(k, source[b], h, from + p, d) % 65536;
    return new Tensor(kvType, data, [batch, H, n, D]);
  });
}

/** The cache must hold positions 0..length-1 of every row, in order (`source[b]` is the row it came from). */
function assertHolds(cache: KvCache, length: number, source = [0]): void {
  assert.equal(cache.length, length);
  for (const [k, t] of cache.tensors.entries()) {
    assert.deepEqual(t.dims, [source.length, H, length, D]);
    const data = t.data as Float32Array | Uint16Array;
    for (const [b, from] of source.entries())
      for (let h = 0; h < H; h++)
        for (let p = 0; p < length; p++)
          for (let d = 0; d < D; d++) assert.equal(data[((b * H + h) * length + p) * D + d], value(k, from, h, p, d) % 65536, `k${k} b${b} h${h} p${p} d${d}`);
  }
}

describe('KvCache blocks', () => {
  for (const kvType of ['float32', 'float16'] as const) {
    test(`${kvType}: appended runs, crops into a block, appends after a crop, crops to 0, forks and gathers`, () => {
      const c = contract(kvType);
      let cache = KvCache.empty(c).append(rows(kvType, [0], 0, 5), [1, 2, 3, 4, 5]);
      cache = cache.append(rows(kvType, [0], 5, 1), [6]).append(rows(kvType, [0], 6, 3), [7, 8, 9]);
      const whole = cache;
      assert.equal(whole.bytes, 9 * H * D * 2 * (kvType === 'float32' ? 4 : 2));
      const cropped = whole.crop(7);
      assert.equal(cropped.lineage, whole, 'a crop keeps its lineage');
      assert.deepEqual(cropped.tokens, [1, 2, 3, 4, 5, 6, 7]);
      // After a crop inside the last block, the next run's rows follow position 7, not 9.
      const rerun = cropped.append(rows(kvType, [0], 7, 2), [70, 80]);
      assert.equal(rerun.lineage, rerun);
      assertHolds(rerun, 9);
      assertHolds(whole.crop(3), 3);
      assertHolds(whole, 9);
      assertHolds(whole.crop(0), 0);
      assertHolds(whole.crop(0).append(rows(kvType, [0], 0, 2), [1, 2]), 2);
      const fork = whole.fork(6);
      assertHolds(fork, 6);
      assertHolds(whole, 9, [0]);
      // A cache of present tensors (the CPU path), cropped then joined.
      const present = KvCache.empty(c).advance(rows(kvType, [0], 0, 4), [1, 2, 3, 4]);
      assertHolds(present.crop(2), 2);
      // Beam rows: row 0 twice, from a cache of blocks.
      const two = whole.crop(5).gather([0, 0]);
      assertHolds(two, 5, [0, 0]);
      assertHolds(two.append(rows(kvType, [0, 0], 5, 1), [6]), 6, [0, 0]);
    });
  }
});
