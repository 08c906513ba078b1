import { halfTable } from '../safetensors';

/**
 * ggml's weight types that Ghostline reads back to float32, each with its block layout (ggml-common.h) and its
 * dequantization (ggml-quants.c's dequantize_row_*, written from their definitions). The converter then
 * quantizes to its own format, so a GGUF's own quantization is undone first: from Q8_0, F16 or BF16 that loses
 * almost nothing; from a 4- or 5-bit file the rounding of both adds up (the README says so).
 */

export interface GgmlType {
  id: number;
  name: string;
  /** Values per block. */
  blockElements: number;
  /** Bytes per block. */
  blockBytes: number;
  /** Decodes `blocks` blocks starting at `src[at]` into `out[o..]`. */
  dequantize(src: Uint8Array, at: number, blocks: number, out: Float32Array, o: number): void;
}

const QK_K = 256;

function view(src: Uint8Array): DataView {
  return new DataView(src.buffer, src.byteOffset, src.byteLength);
}

const f32: GgmlType = {
  id: 0,
  name: 'F32',
  blockElements: 1,
  blockBytes: 4,
  dequantize(src, at, n, out, o) {
    const v = view(src);
    for (let i = 0; i < n; i++) out[o + i] = v.getFloat32(at + 4 * i, true);
  },
};

const f16: GgmlType = {
  id: 1,
  name: 'F16',
  blockElements: 1,
  blockBytes: 2,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let i = 0; i < n; i++) out[o + i] = table[src[at + 2 * i] | (src[at + 2 * i + 1] << 8)];
  },
};

const bf16: GgmlType = {
  id: 30,
  name: 'BF16',
  blockElements: 1,
  blockBytes: 2,
  dequantize(src, at, n, out, o) {
    const bits = new Uint32Array(1);
    const asFloat = new Float32Array(bits.buffer);
    for (let i = 0; i < n; i++) {
      bits[0] = ((src[at + 2 * i] | (src[at + 2 * i + 1] << 8)) << 16) >>> 0;
      out[o + i] = asFloat[0];
    }
  },
};

/** Blocks of 32: an fp16 scale d, 32 int8 codes; x = d * q. */
const q8_0: GgmlType = {
  id: 8,
  name: 'Q8_0',
  blockElements: 32,
  blockBytes: 34,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 34, o += 32) {
      const d = table[src[at] | (src[at + 1] << 8)];
      for (let j = 0; j < 32; j++) out[o + j] = d * ((src[at + 2 + j] << 24) >> 24);
    }
  },
};

/** Blocks of 32: fp16 d, 16 bytes of 4-bit codes (low nibbles: values 0..15, high: 16..31); x = d * (q - 8). */
const q4_0: GgmlType = {
  id: 2,
  name: 'Q4_0',
  blockElements: 32,
  blockBytes: 18,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 18, o += 32) {
      const d = table[src[at] | (src[at + 1] << 8)];
      for (let j = 0; j < 16; j++) {
        const q = src[at + 2 + j];
        out[o + j] = d * ((q & 0xf) - 8);
        out[o + j + 16] = d * ((q >> 4) - 8);
      }
    }
  },
};

/** Blocks of 32: fp16 d and m, 16 bytes of 4-bit codes; x = d * q + m. */
const q4_1: GgmlType = {
  id: 3,
  name: 'Q4_1',
  blockElements: 32,
  blockBytes: 20,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 20, o += 32) {
      const d = table[src[at] | (src[at + 1] << 8)];
      const m = table[src[at + 2] | (src[at + 3] << 8)];
      for (let j = 0; j < 16; j++) {
        const q = src[at + 4 + j];
        out[o + j] = d * (q & 0xf) + m;
        out[o + j + 16] = d * (q >> 4) + m;
      }
    }
  },
};

/** Blocks of 32: fp16 d, 32 high bits (u32), 16 bytes of low nibbles; x = d * (q - 16). */
const q5_0: GgmlType = {
  id: 6,
  name: 'Q5_0',
  blockElements: 32,
  blockBytes: 22,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    const v = view(src);
    for (let b = 0; b < n; b++, at += 22, o += 32) {
      const d = table[src[at] | (src[at + 1] << 8)];
      const qh = v.getUint32(at + 2, true);
      for (let j = 0; j < 16; j++) {
        const q = src[at + 6 + j];
        const h0 = ((qh >>> j) << 4) & 0x10;
        const h1 = (qh >>> (j + 12)) & 0x10;
        out[o + j] = d * (((q & 0xf) | h0) - 16);
        out[o + j + 16] = d * (((q >> 4) | h1) - 16);
      }
    }
  },
};

/** Blocks of 32: fp16 d and m, 32 high bits, 16 bytes of low nibbles; x = d * q + m. */
const q5_1: GgmlType = {
  id: 7,
  name: 'Q5_1',
  blockElements: 32,
  blockBytes: 24,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    const v = view(src);
    for (let b = 0; b < n; b++, at += 24, o += 32) {
      const d = table[src[at] | (src[at + 1] << 8)];
      const m = table[src[at + 2] | (src[at + 3] << 8)];
      const qh = v.getUint32(at + 4, true);
      for (let j = 0; j < 16; j++) {
        const q = src[at + 8 + j];
        const h0 = ((qh >>> j) << 4) & 0x10;
        const h1 = (qh >>> (j + 12)) & 0x10;
        out[o + j] = d * ((q & 0xf) | h0) + m;
        out[o + j + 16] = d * ((q >> 4) | h1) + m;
      }
    }
  },
};

/** The 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block (ggml's get_scale_min_k4). */
function scaleMinK4(j: number, q: Uint8Array, at: number): [number, number] {
  if (j < 4) return [q[at + j] & 63, q[at + j + 4] & 63];
  return [(q[at + j + 4] & 0xf) | ((q[at + j - 4] >> 6) << 4), (q[at + j + 4] >> 4) | ((q[at + j] >> 6) << 4)];
}

/** Super-blocks of 256: fp16 d and dmin, 12 bytes of 6-bit scales/mins for 8 sub-blocks, 128 bytes of nibbles. */
const q4_k: GgmlType = {
  id: 12,
  name: 'Q4_K',
  blockElements: QK_K,
  blockBytes: 144,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 144) {
      const d = table[src[at] | (src[at + 1] << 8)];
      const dmin = table[src[at + 2] | (src[at + 3] << 8)];
      const scales = at + 4;
      let q = at + 16;
      for (let j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
        const [sc1, m1] = scaleMinK4(is, src, scales);
        const [sc2, m2] = scaleMinK4(is + 1, src, scales);
        for (let l = 0; l < 32; l++) out[o++] = d * sc1 * (src[q + l] & 0xf) - dmin * m1;
        for (let l = 0; l < 32; l++) out[o++] = d * sc2 * (src[q + l] >> 4) - dmin * m2;
      }
    }
  },
};

/** Q4_K plus 32 bytes of high bits (one bit per value, two sub-blocks per bit pair). */
const q5_k: GgmlType = {
  id: 13,
  name: 'Q5_K',
  blockElements: QK_K,
  blockBytes: 176,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 176) {
      const d = table[src[at] | (src[at + 1] << 8)];
      const dmin = table[src[at + 2] | (src[at + 3] << 8)];
      const scales = at + 4;
      const qh = at + 16;
      let ql = at + 48;
      let u1 = 1;
      let u2 = 2;
      for (let j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
        const [sc1, m1] = scaleMinK4(is, src, scales);
        const [sc2, m2] = scaleMinK4(is + 1, src, scales);
        for (let l = 0; l < 32; l++) out[o++] = d * sc1 * ((src[ql + l] & 0xf) + (src[qh + l] & u1 ? 16 : 0)) - dmin * m1;
        for (let l = 0; l < 32; l++) out[o++] = d * sc2 * ((src[ql + l] >> 4) + (src[qh + l] & u2 ? 16 : 0)) - dmin * m2;
      }
    }
  },
};

/** Super-blocks of 256: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales, fp16 d; x = d * s * (q - 32). */
const q6_k: GgmlType = {
  id: 14,
  name: 'Q6_K',
  blockElements: QK_K,
  blockBytes: 210,
  dequantize(src, at, n, out, o) {
    const table = halfTable();
    for (let b = 0; b < n; b++, at += 210) {
      const d = table[src[at + 208] | (src[at + 209] << 8)];
      let ql = at;
      let qh = at + 128;
      let sc = at + 192;
      for (let half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, o += 128) {
        for (let l = 0; l < 32; l++) {
          const is = l >> 4;
          const h = src[qh + l];
          const s = (k: number) => (src[sc + is + k] << 24) >> 24;
          out[o + l] = d * s(0) * (((src[ql + l] & 0xf) | ((h & 3) << 4)) - 32);
          out[o + l + 32] = d * s(2) * (((src[ql + l + 32] & 0xf) | (((h >> 2) & 3) << 4)) - 32);
          out[o + l + 64] = d * s(4) * (((src[ql + l] >> 4) | (((h >> 4) & 3) << 4)) - 32);
          out[o + l + 96] = d * s(6) * (((src[ql + l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32);
        }
      }
    }
  },
};

/** The types Ghostline reads, by ggml type id. Others (Q2_K, Q3_K, the IQ formats) are refused by name. */
export const GGML_TYPES: ReadonlyMap<number, GgmlType> = new Map([f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k].map((t) => [t.id, t]));

/** ggml's names of the types not read, for the message. */
export const UNREAD_GGML_TYPES: ReadonlyMap<number, string> = new Map([
  [9, 'Q8_1'],
  [10, 'Q2_K'],
  [11, 'Q3_K'],
  [15, 'Q8_K'],
  [16, 'IQ2_XXS'],
  [17, 'IQ2_XS'],
  [18, 'IQ3_XXS'],
  [19, 'IQ1_S'],
  [20, 'IQ4_NL'],
  [21, 'IQ3_S'],
  [22, 'IQ2_S'],
  [23, 'IQ4_XS'],
  [29, 'IQ1_M'],
  [34, 'TQ1_0'],
  [35, 'TQ2_0'],
  [39, 'MXFP4'],
]);
