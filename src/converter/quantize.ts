/**
 * Symmetric block quantization of weight rows into onnxruntime's MatMulNBits layout, with no zero-point
 * input (the operator's default zero point, 2^(bits-1), is the symmetric one).
 *
 * 4-bit codes are exactly ggml's Q4_0 (quantize_row_q4_0_ref, float32 arithmetic, scale stored as fp16) and
 * 8-bit codes ggml's Q8_0, so a GGUF of the same checkpoint carries the same codes and speeds compare like
 * for like. Layout: B [N, blocks, blockBytes] (4-bit: element 2j in the low nibble of byte j), scales [N, blocks].
 */

export type Bits = 4 | 8;

export interface QuantizedRows {
  /** rows x blocks x (blockSize * bits / 8) bytes. */
  codes: Uint8Array;
  /** rows x blocks scales. */
  scales: Float32Array;
}

const f32 = Math.fround;
const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** Rounds a float32 to the nearest float16 value (round to nearest even), returned as float32. */
export function toHalfPrecision(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  scratch[0] = x;
  const bits = scratchBits[0];
  const exp = ((bits >>> 23) & 0xff) - 127;
  if (exp > 15) return x > 0 ? 65504 : -65504; // saturate: a scale this large means a broken checkpoint anyway
  // Subnormal halves have a fixed quantum of 2^-24; normal ones keep 10 mantissa bits.
  const quantum = exp < -14 ? 2 ** -24 : 2 ** (exp - 10);
  const q = x / quantum;
  let r = Math.round(q);
  if (Math.abs(q - Math.trunc(q)) === 0.5 && r % 2 !== 0) r -= Math.sign(q); // ties to even
  return f32(r * quantum);
}

/**
 * Quantizes `rows` rows of `k` values each (row-major `w`), padding the last block with zeros when k is not a
 * multiple of the block size. `rowScale` (optional) multiplies each stored scale of row r, leaving the codes
 * untouched (used to fold the attention scale into the query rows).
 */
export function quantizeRows(w: Float32Array, rows: number, k: number, bits: Bits, blockSize: number, rowScale?: (r: number) => number): QuantizedRows {
  const blocks = Math.ceil(k / blockSize);
  const blockBytes = (blockSize * bits) / 8;
  const codes = new Uint8Array(rows * blocks * blockBytes);
  const scales = new Float32Array(rows * blocks);
  const q = new Uint8Array(blockSize);
  for (let r = 0; r < rows; r++) {
    const extra = rowScale ? rowScale(r) : 1;
    for (let b = 0; b < blocks; b++) {
      const start = r * k + b * blockSize;
      const n = Math.min(blockSize, k - b * blockSize);
      let amax = 0;
      let max = 0;
      for (let i = 0; i < n; i++) {
        const v = w[start + i];
        if (Math.abs(v) > amax) {
          amax = Math.abs(v);
          max = v;
        }
      }
      let d: number;
      if (bits === 4) {
        d = f32(max / -8);
        const id = d ? f32(1 / d) : 0;
        for (let i = 0; i < blockSize; i++) {
          const v = i < n ? w[start + i] : 0;
          q[i] = Math.min(15, Math.trunc(f32(f32(v * id) + 8.5)));
        }
        const out = (r * blocks + b) * blockBytes;
        for (let j = 0; j < blockBytes; j++) codes[out + j] = q[2 * j] | (q[2 * j + 1] << 4);
      } else {
        d = f32(amax / 127);
        const id = d ? f32(1 / d) : 0;
        const out = (r * blocks + b) * blockBytes;
        for (let i = 0; i < blockSize; i++) {
          const v = i < n ? w[start + i] : 0;
          const x = f32(v * id);
          codes[out + i] = Math.sign(x) * Math.round(Math.abs(x)) + 128; // roundf: ties away from zero, as ggml
        }
      }
      scales[r * blocks + b] = f32(toHalfPrecision(d) * extra);
    }
  }
  return { codes, scales };
}

/** The float values the codes stand for (tests and the loss report). */
export function dequantizeRows(qr: QuantizedRows, rows: number, k: number, bits: Bits, blockSize: number): Float32Array {
  const blocks = Math.ceil(k / blockSize);
  const blockBytes = (blockSize * bits) / 8;
  const out = new Float32Array(rows * k);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < k; i++) {
      const b = Math.floor(i / blockSize);
      const j = i % blockSize;
      const base = (r * blocks + b) * blockBytes;
      const code = bits === 4 ? (qr.codes[base + (j >> 1)] >> ((j & 1) * 4)) & 15 : qr.codes[base + j];
      out[r * k + i] = (code - (bits === 4 ? 8 : 128)) * qr.scales[r * blocks + b];
    }
  }
  return out;
}
