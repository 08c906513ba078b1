import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { dequantizeRows, quantizeRows, toHalfPrecision, type Bits } from '../../src/converter/quantize';
import { Checkpoint } from '../../src/converter/safetensors';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { maxAbsDiff } from '../helpers';
import { CHECKPOINTS, checkpointReference, copyCheckpointMeta, f32Bytes, tempDir, writeSafetensors, type TensorSpec } from './checkpointFixtures';

describe('block quantization (ggml Q4_0 / Q8_0 codes)', () => {
  test('Q4_0: scale = signed max / -8 (as fp16), codes trunc(x / d + 8.5) capped at 15, pairs packed low nibble first', () => {
    const w = new Float32Array(32).map((_, i) => (i - 12) / 10); // max |x| is +1.9 at i = 31
    const q = quantizeRows(w, 1, 32, 4, 32);
    const d = toHalfPrecision(Math.fround(1.9 / -8));
    assert.equal(q.scales[0], d);
    const codes = Array.from({ length: 32 }, (_, i) => (q.codes[i >> 1] >> ((i & 1) * 4)) & 15);
    const id = Math.fround(1 / Math.fround(1.9 / -8));
    assert.deepEqual(
      codes,
      Array.from(w, (x) => Math.min(15, Math.trunc(Math.fround(Math.fround(x * id) + 8.5)))),
    );
    assert.equal(codes[31], 0); // the signed maximum maps to -8
    assert.equal(codes[12], 8); // zero maps to the zero point
  });

  test('Q8_0 codes are round(x / (max|x| / 127)) + 128', () => {
    const w = Float32Array.from({ length: 32 }, (_, i) => Math.sin(i));
    const q = quantizeRows(w, 1, 32, 8, 32);
    const amax = Math.max(...Array.from(w, Math.abs));
    assert.equal(q.scales[0], toHalfPrecision(Math.fround(amax / 127)));
    assert.ok(maxAbsDiff(dequantizeRows(q, 1, 32, 8, 32), w) <= q.scales[0] / 2 + 1e-7);
  });

  test('Q8_0 rounds halves away from zero (C roundf), on both signs', () => {
    // d = 127 / 127 = 1 (exact in fp16), so the codes are round(x) + 128
    const w = Float32Array.from([127, -2.5, -0.5, 0.5, 2.5, -1.5, 1.5, ...new Array(25).fill(0)]);
    const q = quantizeRows(w, 1, 32, 8, 32);
    assert.deepEqual(
      Array.from(q.codes.subarray(0, 7), (c) => c - 128),
      [127, -3, -1, 1, 3, -2, 2],
    );
  });

  test('a short last block is zero-padded, and the row scale multiplies scales only', () => {
    const w = Float32Array.from({ length: 40 }, (_, i) => i / 40 - 0.5);
    const a = quantizeRows(w, 1, 40, 4, 32);
    const b = quantizeRows(w, 1, 40, 4, 32, () => 0.25);
    assert.equal(a.codes.length, 2 * 16);
    assert.deepEqual(b.codes, a.codes);
    assert.deepEqual(
      Array.from(b.scales),
      Array.from(a.scales, (s) => Math.fround(s * 0.25)),
    );
  });

  test('toHalfPrecision rounds to the nearest fp16 value', () => {
    assert.equal(toHalfPrecision(1), 1);
    assert.equal(toHalfPrecision(1 + 2 ** -11), 1); // tie -> even
    assert.equal(toHalfPrecision(1 + 3 * 2 ** -11), 1 + 2 ** -9);
    assert.equal(toHalfPrecision(2 ** -20), 2 ** -20); // subnormal, exact
    assert.equal(toHalfPrecision(1e6), 65504);
  });
});

/**
 * The quantized graphs' layout (MatMulNBits packing and default zero points, GatherBlockQuantized for the
 * tied embedding, scales with the attention scale folded in) checked exactly: a checkpoint whose weights are
 * already on the quantization grid converts to q4/int8 without loss, so with fp32 arithmetic (accuracy level
 * 0) its logits must equal the fp32 graph's of the same weights.
 */
for (const [bits, quant] of [
  [4, 'q4'],
  [8, 'int8'],
] as const) {
  for (const name of ['qwen2', 'starcoder2', 'llama-untied']) {
    test(`${quant} graph of ${name} equals the fp32 graph of the same (grid) weights`, async () => {
      const dir = tempDir(`grid-${name}`);
      const grid = path.join(dir, 'ckpt');
      fs.mkdirSync(grid);
      copyCheckpointMeta(name, grid);
      writeGridCheckpoint(path.join(CHECKPOINTS, name), path.join(grid, 'model.safetensors'), bits);
      const ref = checkpointReference(name);
      const run = async (q: 'fp32' | 'q4' | 'int8', accuracyLevel: number) => {
        const r = await convertCheckpoint({ from: grid, out: path.join(dir, `${q}-${accuracyLevel}`), quant: q, accuracyLevel });
        const m = await OnnxCausalLM.load(r.onnxFile, JSON.parse(fs.readFileSync(path.join(r.out, 'config.json'), 'utf8')), { threads: 1 });
        const out = await m.forward([ref.long_prompt_ids.slice(0, 40)], m.emptyCache(), 3);
        await m.release();
        return { logits: out.logits };
      };
      const fp32 = await run('fp32', 0);
      const exact = await run(quant, 0);
      const fast = await run(quant, 4);
      assert.ok(maxAbsDiff(exact.logits, fp32.logits) < 2e-4, `${quant} (accuracy 0) vs fp32: ${maxAbsDiff(exact.logits, fp32.logits)}`);
      // int8 activations (accuracy level 4) round more (their effect on loss is measured on real text in the
      // model card); here only a sanity bound: the logits keep their direction.
      assert.ok(cosine(fast.logits, fp32.logits) > 0.99, `${quant} (accuracy 4) vs fp32: cosine ${cosine(fast.logits, fp32.logits)}`);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
}

/**
 * `headBits: 8` with q4: the embedding table and the output head are 8-bit, the rest 4-bit. A checkpoint whose
 * head is on the 8-bit grid and body on the 4-bit grid then converts without loss (its logits equal the fp32
 * graph's at accuracy level 0), where plain q4 rounds the head again; for tied (qwen2) and untied heads.
 */
for (const name of ['qwen2', 'llama-untied']) {
  test(`q4 with an 8-bit head of ${name} equals the fp32 graph of the same (grid) weights; plain q4 does not`, async () => {
    const dir = tempDir(`head8-${name}`);
    const grid = path.join(dir, 'ckpt');
    fs.mkdirSync(grid);
    copyCheckpointMeta(name, grid);
    writeGridCheckpoint(path.join(CHECKPOINTS, name), path.join(grid, 'model.safetensors'), 4, 8);
    const ref = checkpointReference(name);
    const run = async (label: string, quant: 'fp32' | 'q4', headBits?: 4 | 8) => {
      const r = await convertCheckpoint({ from: grid, out: path.join(dir, label), quant, accuracyLevel: 0, headBits });
      const config = JSON.parse(fs.readFileSync(path.join(r.out, 'config.json'), 'utf8'));
      const m = await OnnxCausalLM.load(r.onnxFile, config, { threads: 1 });
      const out = await m.forward([ref.long_prompt_ids.slice(0, 40)], m.emptyCache(), 3);
      await m.release();
      return { logits: out.logits, converted: config.ghostline.converted, bytes: r.bytes };
    };
    const fp32 = await run('fp32', 'fp32');
    const head8 = await run('head8', 'q4', 8);
    const q4 = await run('q4', 'q4');
    assert.ok(maxAbsDiff(head8.logits, fp32.logits) < 2e-4, `q4 + 8-bit head vs fp32: ${maxAbsDiff(head8.logits, fp32.logits)}`);
    assert.ok(maxAbsDiff(q4.logits, fp32.logits) > 1e-3, `plain q4 re-rounds the head: ${maxAbsDiff(q4.logits, fp32.logits)}`);
    assert.equal(head8.converted.head_bits, 8);
    assert.equal(q4.converted.head_bits, 4);
    assert.ok(head8.bytes > q4.bytes, `${head8.bytes} vs ${q4.bytes}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

test('--head-bits: 4 or 8, and only with q4', async () => {
  const dir = tempDir('head-bits-bad');
  const from = path.join(CHECKPOINTS, 'qwen2');
  await assert.rejects(convertCheckpoint({ from, out: path.join(dir, 'a'), headBits: 6 as 8 }), /--head-bits must be 4 or 8, got 6/);
  await assert.rejects(convertCheckpoint({ from, out: path.join(dir, 'b'), quant: 'int8', headBits: 8 }), /--head-bits applies to --quant q4 only/);
  fs.rmSync(dir, { recursive: true, force: true });
});

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

const HEAD_TABLES = new Set(['model.embed_tokens.weight', 'lm_head.weight']);

/**
 * Every 2-D weight replaced by its own quantize -> dequantize round trip (fp32), 1-D tensors kept. `headBits`:
 * the embedding and output head on that grid instead.
 */
function writeGridCheckpoint(from: string, file: string, bits: Bits, headBits: Bits = bits): void {
  const ck = Checkpoint.open(from);
  const out: Record<string, TensorSpec> = {};
  for (const t of ck.tensors.values()) {
    let v = ck.readAll(t);
    if (t.shape.length === 2) {
      const [rows, k] = t.shape;
      const b = HEAD_TABLES.has(t.name) ? headBits : bits;
      v = dequantizeRows(quantizeRows(v, rows, k, b, 32), rows, k, b, 32);
    }
    out[t.name] = { dtype: 'F32', shape: t.shape, data: f32Bytes(Float32Array.from(v)) };
  }
  ck.close();
  writeSafetensors(file, out);
}
