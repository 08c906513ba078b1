import { LEAN_GRAPH_NAME, leanNames as N } from '../engine/model/leanContract';
import type { Architecture } from './architecture';
import { ConvertError } from './errors';
import { DT, type OnnxWriter } from './onnxWriter';
import { quantizeRows, type Bits } from './quantize';
import type { TensorInfo, TensorSource } from './tensorSource';
import type { Quant } from './types';
import { yieldToEventLoop } from '../engine/shared/yieldToEventLoop';

export interface GraphOptions {
  quant: Quant;
  blockSize: number;
  accuracyLevel: number;
  /** Bits of the embedding table and the output head when quantized (default: the body's). */
  headBits?: Bits;
  /** Called with the checkpoint bytes just consumed; throws to cancel. */
  consumed: (bytes: number, tensor: string) => void;
}

/** Floats per read: bounds the converter's memory whatever the tensor size. */
const CHUNK_FLOATS = 4 << 20;
const MS = 'com.microsoft';

/**
 * Writes the lean decoder graph (contract in src/engine/model/leanContract.ts) for a llama / qwen2 / starcoder2
 * checkpoint: fused q/k/v and gate/up projections, onnxruntime's RotaryEmbedding, (Skip)SimplifiedLayerNorm
 * or (Skip)LayerNorm, grouped query heads folded into the rows of the score product (no KV expansion),
 * MatMulNBits weights (or fp32 MatMul), and logits of the last positions only.
 */
export async function writeLeanGraph(ck: TensorSource, a: Architecture, w: OnnxWriter, o: GraphOptions): Promise<void> {
  await new Builder(ck, a, w, o).build();
}

class Builder {
  private readonly bits: Bits | null;
  /** The embedding's and the output head's bits (one table when they are tied). */
  private readonly headBits: Bits | null;
  private readonly rep: number;

  constructor(
    private readonly ck: TensorSource,
    private readonly a: Architecture,
    private readonly w: OnnxWriter,
    private readonly o: GraphOptions,
  ) {
    this.bits = o.quant === 'q4' ? 4 : o.quant === 'int8' ? 8 : null;
    this.headBits = this.bits && (o.headBits ?? this.bits);
    this.rep = a.heads / a.kvHeads;
  }

  async build(): Promise<void> {
    const { a, w } = this;
    const D = a.headDim;
    w.input(N.inputIds, DT.int64, ['batch', 'seq']);
    w.input(N.positionIds, DT.int64, ['batch', 'seq']);
    w.input(N.attentionBias, DT.float, ['seq', 'cap_plus_seq']);
    for (let i = 0; i < a.layers; i++) {
      w.input(N.cacheKey(i), DT.float, ['batch', a.kvHeads, D, 'cap']);
      w.input(N.cacheValue(i), DT.float, ['batch', a.kvHeads, 'cap', D]);
    }
    w.input(N.keep, DT.int64, []);
    w.output(N.logits, DT.float, ['batch', 'kept', a.vocab]);
    w.output(N.logitsLse, DT.float, ['batch', 'kept']);
    w.output(N.newKv, DT.float, ['two_layers_x_batch', 'seq', a.kvHeads * D]);

    this.rotaryCaches();
    // Shared by all layers: the bias with rows repeated for the query heads of a KV head, and the split of
    // the probabilities into cache columns and new columns.
    const bias = w.op('Tile', [N.attentionBias, w.constant('bias_reps', DT.int64, [2], [this.rep, 1])]);
    const capDim = w.op('Shape', [N.cacheKey(0)], { start: 3, end: 4 });
    const seqDim = w.op('Shape', [N.inputIds], { start: 1, end: 2 });
    const splitSizes = w.op('Concat', [capDim, seqDim], { axis: 0 });

    const embed = this.embedding();
    await yieldToEventLoop();
    let residual = embed.hidden;
    let pending: string | null = null;
    const newKv: string[] = [];
    for (let i = 0; i < a.layers; i++) {
      const p = `model.layers.${i}.`;
      const h: string =
        pending === null ? this.norm(residual, `${p}input_layernorm`) : this.skipNorm(pending, residual, `${p}input_layernorm`, (r) => (residual = r));
      const attn = this.attention(i, h, bias, splitSizes, newKv);
      const h2 = this.skipNorm(attn, residual, `${p}post_attention_layernorm`, (r) => (residual = r));
      pending = this.mlp(i, h2);
      await yieldToEventLoop();
    }
    const normed = this.skipNorm(pending!, residual, 'model.norm', () => undefined);
    // [batch, seq, kvh*D] tensors stacked on the batch axis: [2 * layers * batch, seq, kvh*D] (no Unsqueeze nodes)
    w.op('Concat', newKv, { axis: 0 }, '', N.newKv);
    this.lmHead(this.keepLast(normed, seqDim), embed);
    this.logSumExp();
    w.finish(LEAN_GRAPH_NAME, 'ghostline convert');
  }

  // ---- building blocks --------------------------------------------------------------------------------

  private rotaryCaches(): void {
    const { a } = this;
    const half = a.headDim / 2;
    const rows = a.maxPositions;
    const cos = new Float32Array(rows * half);
    const sin = new Float32Array(rows * half);
    for (let p = 0; p < rows; p++) {
      for (let j = 0; j < half; j++) {
        const angle = Math.fround(p * a.invFreq[j]); // float32 product, as transformers computes it
        cos[p * half + j] = Math.cos(angle);
        sin[p * half + j] = Math.sin(angle);
      }
    }
    this.w.weight('cos_cache', DT.float, [rows, half], cos);
    this.w.weight('sin_cache', DT.float, [rows, half], sin);
  }

  /** A 1-D parameter (norm weight, bias), fp32. */
  private vector(name: string, length: number): string {
    const t = this.ck.require(name, [length]);
    const v = this.ck.readAll(t);
    this.o.consumed(t.bytes, name);
    return this.w.weight(name, DT.float, [length], v);
  }

  private norm(x: string, prefix: string): string {
    const { a, w } = this;
    const gamma = this.vector(`${prefix}.weight`, a.hidden);
    if (a.norm === 'rms') return w.op('SimplifiedLayerNormalization', [x, gamma], { axis: -1, epsilon: a.eps, stash_type: 1 });
    return w.op('LayerNormalization', [x, gamma, this.vector(`${prefix}.bias`, a.hidden)], { axis: -1, epsilon: a.eps });
  }

  /** norm(x + residual), also handing back the new residual stream. */
  private skipNorm(x: string, residual: string, prefix: string, setResidual: (r: string) => void): string {
    const { a, w } = this;
    const gamma = this.vector(`${prefix}.weight`, a.hidden);
    const ins = a.norm === 'rms' ? [x, residual, gamma] : [x, residual, gamma, this.vector(`${prefix}.bias`, a.hidden)];
    const op = a.norm === 'rms' ? 'SkipSimplifiedLayerNormalization' : 'SkipLayerNormalization';
    const outs = w.node(op, ins, 4, { epsilon: a.eps }, MS);
    setResidual(outs[3]);
    return outs[0];
  }

  private attention(i: number, h: string, bias: string, splitSizes: string, newKv: string[]): string {
    const { a, w } = this;
    const D = a.headDim;
    const p = `model.layers.${i}.self_attn.`;
    const qRows = a.heads * D;
    const kvRows = a.kvHeads * D;
    const scale = 1 / Math.sqrt(D);
    // 1/sqrt(head_dim) folded into the query rows (rotary is linear, so it commutes).
    const parts = [
      { name: `${p}q_proj`, rows: qRows, scale },
      { name: `${p}k_proj`, rows: kvRows, scale: 1 },
      { name: `${p}v_proj`, rows: kvRows, scale: 1 },
    ];
    const qkv = this.linear(h, parts, a.hidden, a.qkvBias, `${p}qkv_proj`);
    const [q0, k0, v] = w.node('Split', [qkv, w.constant(`${p}qkv_split`, DT.int64, [3], [qRows, kvRows, kvRows])], 3, { axis: -1 });
    const q = w.op('RotaryEmbedding', [q0, N.positionIds, 'cos_cache', 'sin_cache'], { interleaved: 0, num_heads: a.heads }, MS);
    const k = w.op('RotaryEmbedding', [k0, N.positionIds, 'cos_cache', 'sin_cache'], { interleaved: 0, num_heads: a.kvHeads }, MS);
    newKv.push(k, v);

    const shape = (name: string, dims: number[]) => w.constant(`${p}${name}`, DT.int64, [dims.length], dims);
    // queries [b, s, kvh*rep*D] -> [b, kvh, rep*s, D]: row r = rep_index * s + position
    const q5 = w.op('Transpose', [w.op('Reshape', [q, shape('q5', [0, 0, a.kvHeads, this.rep, D])])], { perm: [0, 2, 3, 1, 4] });
    const qg = w.op('Reshape', [q5, shape('qg', [0, a.kvHeads, -1, D])]);
    const kvShape = shape('kv4', [0, 0, a.kvHeads, D]);
    const kNew = w.op('Transpose', [w.op('Reshape', [k, kvShape])], { perm: [0, 2, 3, 1] }); // [b, kvh, D, s]
    const vNew = w.op('Transpose', [w.op('Reshape', [v, kvShape])], { perm: [0, 2, 1, 3] }); // [b, kvh, s, D]
    const scores = w.op('Concat', [w.op('MatMul', [qg, N.cacheKey(i)]), w.op('MatMul', [qg, kNew])], { axis: -1 });
    const probs = w.op('Softmax', [w.op('Add', [scores, bias])], { axis: -1 });
    const [pCache, pNew] = w.node('Split', [probs, splitSizes], 2, { axis: -1 });
    const ctx = w.op('Add', [w.op('MatMul', [pCache, N.cacheValue(i)]), w.op('MatMul', [pNew, vNew])]); // [b, kvh, rep*s, D]
    const ctx5 = w.op('Transpose', [w.op('Reshape', [ctx, shape('ctx5', [0, a.kvHeads, this.rep, -1, D])])], { perm: [0, 3, 1, 2, 4] });
    const merged = w.op('Reshape', [ctx5, shape('ctx3', [0, 0, qRows])]);
    return this.linear(merged, [{ name: `${p}o_proj`, rows: a.hidden, scale: 1 }], qRows, a.oBias, `${p}o_proj`);
  }

  private mlp(i: number, h: string): string {
    const { a, w } = this;
    const p = `model.layers.${i}.mlp.`;
    const I = a.intermediate;
    if (a.mlp === 'silu-gated') {
      const gu = this.linear(
        h,
        [
          { name: `${p}gate_proj`, rows: I, scale: 1 },
          { name: `${p}up_proj`, rows: I, scale: 1 },
        ],
        a.hidden,
        a.mlpBias,
        `${p}gate_up_proj`,
      );
      const [gate, up] = w.node('Split', [gu, w.constant(`${p}gu_split`, DT.int64, [2], [I, I])], 2, { axis: -1 });
      const act = w.op('Mul', [w.op('QuickGelu', [gate], { alpha: 1.0 }, MS), up]); // QuickGelu(alpha 1) = SiLU
      return this.linear(act, [{ name: `${p}down_proj`, rows: a.hidden, scale: 1 }], I, a.mlpBias, `${p}down_proj`);
    }
    const fc = this.linear(h, [{ name: `${p}c_fc`, rows: I, scale: 1 }], a.hidden, false, `${p}c_fc`);
    const act = a.mlpBias ? w.op('FastGelu', [fc, this.vector(`${p}c_fc.bias`, I)], {}, MS) : w.op('FastGelu', [fc], {}, MS);
    return this.linear(act, [{ name: `${p}c_proj`, rows: a.hidden, scale: 1 }], I, a.mlpBias, `${p}c_proj`);
  }

  /** The last `num_logits_to_keep` positions (0: all). */
  private keepLast(x: string, seqDim: string): string {
    const { w } = this;
    const zero = w.constant('zero_i64', DT.int64, [], [0]);
    const keep = w.op('Where', [w.op('Greater', [N.keep, zero]), w.op('Unsqueeze', [N.keep, w.constant('axes_0', DT.int64, [1], [0])]), seqDim]);
    const start = w.op('Sub', [seqDim, keep]);
    return w.op('Slice', [x, start, w.constant('slice_end', DT.int64, [1], [Number.MAX_SAFE_INTEGER]), w.constant('axes_1', DT.int64, [1], [1])]);
  }

  // ---- weights ----------------------------------------------------------------------------------------

  /**
   * x @ W^T for one or more row-stacked HF weights [rows, k] (fused projections), plus their biases.
   * Quantized: one MatMulNBits over the stacked rows. fp32: MatMul with the transposed stack.
   */
  private linear(x: string, parts: { name: string; rows: number; scale: number }[], k: number, withBias: boolean, name: string): string {
    const { w } = this;
    const tensors = parts.map((p) => this.ck.require(`${p.name}.weight`, [p.rows, k]));
    const n = parts.reduce((s, p) => s + p.rows, 0);
    if (this.bits) {
      const q = this.quantizedStack(
        tensors,
        parts.map((p) => p.scale),
        k,
      );
      return this.matMulNBits(x, q, name, undefined, withBias ? this.stackedBias(parts, name) : undefined);
    }
    const wt = new Float32Array(k * n);
    let col = 0;
    tensors.forEach((t, pi) => {
      const rows = this.ck.readAll(t);
      this.o.consumed(t.bytes, t.name);
      const s = parts[pi].scale;
      for (let r = 0; r < t.shape[0]; r++) for (let c = 0; c < k; c++) wt[c * n + col + r] = rows[r * k + c] * s;
      col += t.shape[0];
    });
    const y = w.op('MatMul', [x, w.weight(`${name}.weight_t`, DT.float, [k, n], wt)]);
    return withBias ? w.op('Add', [y, this.stackedBias(parts, name)]) : y;
  }

  /** The biases of row-stacked projections, one vector (scaled like their rows). */
  private stackedBias(parts: { name: string; rows: number; scale: number }[], name: string): string {
    const b = new Float32Array(parts.reduce((s, p) => s + p.rows, 0));
    let at = 0;
    parts.forEach((p) => {
      const t = this.ck.require(`${p.name}.bias`, [p.rows]);
      const v = this.ck.readAll(t);
      this.o.consumed(t.bytes, t.name);
      for (let r = 0; r < p.rows; r++) b[at + r] = v[r] * p.scale;
      at += p.rows;
    });
    return this.w.weight(`${name}.bias`, DT.float, [b.length], b);
  }

  /** Codes of row-stacked tensors streamed into the data file; scales kept in memory (1/8 of fp32) and written after. */
  private quantizedStack(tensors: TensorInfo[], rowScales: number[], k: number, bits: Bits = this.bits!): QuantizedData {
    const { w } = this;
    const bs = this.o.blockSize;
    const blocks = Math.ceil(k / bs);
    const n = tensors.reduce((s, t) => s + t.shape[0], 0);
    const scales = new Float32Array(n * blocks);
    const codesAt = w.alignedStart();
    let row = 0;
    tensors.forEach((t, ti) => {
      const rows = t.shape[0];
      const step = Math.max(1, Math.floor(CHUNK_FLOATS / k));
      for (let r0 = 0; r0 < rows; r0 += step) {
        const r1 = Math.min(rows, r0 + step);
        const data = this.ck.readRows(t, r0, r1); // refuses NaN and infinities
        const q = quantizeRows(data, r1 - r0, k, bits, bs, () => rowScales[ti]);
        w.appendRaw(q.codes);
        scales.set(q.scales, (row + r0) * blocks);
        this.o.consumed(((r1 - r0) / rows) * t.bytes, t.name);
      }
      row += rows;
    });
    return { n, k, bits, blocks, codesAt, codesBytes: (n * blocks * bs * bits) / 8, scalesAt: w.append(scales) };
  }

  /** MatMulNBits of x with quantized data already written. */
  private matMulNBits(x: string, q: QuantizedData, name: string, out?: string, bias?: string): string {
    const { w } = this;
    const bs = this.o.blockSize;
    const codes = w.externalRef(`${name}.qweight`, DT.uint8, [q.n, q.blocks, (bs * q.bits) / 8], q.codesAt, q.codesBytes);
    const scales = w.externalRef(`${name}.scales`, DT.float, [q.n * q.blocks], q.scalesAt, q.n * q.blocks * 4);
    const attrs = { K: q.k, N: q.n, bits: q.bits, block_size: bs, accuracy_level: this.o.accuracyLevel };
    // inputs: A, B, scales, zero_points, g_idx, bias (the bias input saves an Add node)
    return w.op('MatMulNBits', bias ? [x, codes, scales, '', '', bias] : [x, codes, scales], attrs, MS, out);
  }

  private embedding(): { hidden: string; table: TensorInfo; quantized?: QuantizedData } {
    const { a, w } = this;
    const table = this.ck.require('model.embed_tokens.weight', [a.vocab, a.hidden]);
    if (this.headBits && a.hidden % this.o.blockSize === 0) {
      const q = this.quantizedStack([table], [1], a.hidden, this.headBits);
      const blocks = q.blocks;
      const data = w.externalRef('model.embed_tokens.gather_codes', DT.uint8, [a.vocab, (a.hidden * q.bits) / 8], q.codesAt, q.codesBytes);
      const scales = w.externalRef('model.embed_tokens.gather_scales', DT.float, [a.vocab, blocks], q.scalesAt, a.vocab * blocks * 4);
      const hidden = w.op(
        'GatherBlockQuantized',
        [data, N.inputIds, scales],
        { bits: q.bits, block_size: this.o.blockSize, gather_axis: 0, quantize_axis: 1 },
        MS,
      );
      return { hidden, table, quantized: q };
    }
    const t = this.ck.readAll(table);
    this.o.consumed(table.bytes, table.name);
    return { hidden: w.op('Gather', [w.weight('model.embed_tokens.weight', DT.float, [a.vocab, a.hidden], t), N.inputIds], { axis: 0 }), table };
  }

  /** Each logits row's log(sum(exp)), stable: max + log(sum(exp(row - max))). */
  private logSumExp(): void {
    const { w } = this;
    const max = w.op('ReduceMax', [N.logits], { axes: [-1], keepdims: 1 });
    const sum = w.op('ReduceSum', [w.op('Exp', [w.op('Sub', [N.logits, max])]), w.constant('lse_axes', DT.int64, [1], [-1])], { keepdims: 0 });
    w.op('Add', [w.op('Log', [sum]), w.op('Squeeze', [max, w.constant('lse_squeeze', DT.int64, [1], [-1])])], {}, '', N.logitsLse);
  }

  private lmHead(x: string, embed: ReturnType<Builder['embedding']>): void {
    const { a, w } = this;
    const tied = a.tied;
    if (!tied && !this.ck.get('lm_head.weight')) throw new ConvertError(this.ck.dir, 'tie_word_embeddings is false but the checkpoint has no "lm_head.weight"');
    if (this.bits) {
      // Tied and quantized: the embedding's codes again, seen as MatMulNBits' [N, blocks, blockBytes] (no second copy on disk).
      const q =
        tied && embed.quantized
          ? embed.quantized
          : this.quantizedStack([tied ? embed.table : this.ck.require('lm_head.weight', [a.vocab, a.hidden])], [1], a.hidden, this.headBits!);
      this.matMulNBits(x, q, 'lm_head', N.logits);
      return;
    }
    // fp32: Gemm with transB reads the [vocab, hidden] table as it is stored (no transposed copy).
    let table: string;
    if (tied) table = 'model.embed_tokens.weight';
    else {
      const t = this.ck.require('lm_head.weight', [a.vocab, a.hidden]);
      const v = this.ck.readAll(t);
      this.o.consumed(t.bytes, t.name);
      table = w.weight('lm_head.weight', DT.float, [a.vocab, a.hidden], v);
    }
    const flat = w.op('Reshape', [x, w.constant('lm_flat', DT.int64, [2], [-1, a.hidden])]);
    const batch = w.op('Shape', [N.inputIds], { start: 0, end: 1 });
    const outShape = w.op('Concat', [batch, w.constant('lm_rest', DT.int64, [2], [-1, a.vocab])], { axis: 0 });
    w.op('Reshape', [w.op('Gemm', [flat, table], { transB: 1 }), outShape], {}, '', N.logits);
  }
}

interface QuantizedData {
  n: number;
  k: number;
  bits: Bits;
  blocks: number;
  codesAt: number;
  codesBytes: number;
  scalesAt: number;
}
