import * as fs from 'node:fs';
import { ConvertError, openForReading } from '../errors';
import { checkFinite, rowLength, type TensorInfo, type TensorSource } from '../tensorSource';
import { type GgufHeader, type GgufTensor, readGgufHeader } from './ggufFile';

/**
 * The tensors of a GGUF file under their Hugging Face names and shapes, dequantized to float32 row range by row
 * range, so the lean graph is built from a GGUF file exactly as from the checkpoint it was made from.
 *
 * Names (llama.cpp's convert_hf_to_gguf.py tensor map): token_embd -> model.embed_tokens, output_norm ->
 * model.norm, output -> lm_head, blk.N.{attn_norm, ffn_norm, attn_q/k/v, attn_output, ffn_gate/up/down} ->
 * model.layers.N.{input_layernorm, post_attention_layernorm, self_attn.*_proj, mlp.*_proj} (StarCoder2: ffn_up/down
 * -> mlp.c_fc/c_proj), weights and biases alike.
 * Shapes: ggml lists dims innermost first, so a Hugging Face [out, in] weight is GGUF [in, out]; the bytes are
 * laid out alike. llama models only: llama.cpp stores q/k rows permuted for its rotary layout (adjacent pairs,
 * where Hugging Face rotates the two halves of each head); the rows are read back in Hugging Face's order.
 */

const LAYER_PARTS: Record<string, string> = {
  attn_norm: 'input_layernorm',
  ffn_norm: 'post_attention_layernorm',
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_output: 'self_attn.o_proj',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};
/** StarCoder2's MLP has no gate: c_fc -> gelu(tanh) -> c_proj, which llama.cpp names ffn_up and ffn_down. */
const STARCODER2_PARTS: Record<string, string> = { ...LAYER_PARTS, ffn_up: 'mlp.c_fc', ffn_down: 'mlp.c_proj' };
const TOP_LEVEL: Record<string, string> = { token_embd: 'model.embed_tokens', output_norm: 'model.norm', output: 'lm_head' };

function huggingFaceName(ggufName: string, arch?: string): string | undefined {
  const m = /^blk\.(\d+)\.([a-z_]+)\.(weight|bias)$/.exec(ggufName);
  if (m) {
    const part = (arch === 'starcoder2' ? STARCODER2_PARTS : LAYER_PARTS)[m[2]];
    return part ? `model.layers.${m[1]}.${part}.${m[3]}` : undefined;
  }
  const top = /^([a-z_]+)\.(weight|bias)$/.exec(ggufName);
  const name = top ? TOP_LEVEL[top[1]] : undefined;
  return name ? `${name}.${top![2]}` : undefined;
}

interface Entry {
  info: TensorInfo;
  gguf: GgufTensor;
  /** llama's q/k: the head size of the rows to un-permute. */
  rotaryHeadDim?: number;
}

export class GgufCheckpoint implements TensorSource {
  readonly tensors: ReadonlyMap<string, TensorInfo>;

  private constructor(
    readonly header: GgufHeader,
    private readonly fd: number,
    private readonly entries: Map<string, Entry>,
  ) {
    this.tensors = new Map([...entries].map(([k, e]) => [k, e.info]));
  }

  get dir(): string {
    return this.header.file;
  }

  /** `headDims`: llama models' head size, which un-permutes the q/k rows (undefined for qwen2). */
  static open(file: string, header: GgufHeader = readGgufHeader(file), rotaryHeadDim?: number): GgufCheckpoint {
    const entries = new Map<string, Entry>();
    const arch = header.metadata.get('general.architecture');
    for (const t of header.tensors.values()) {
      const name = huggingFaceName(t.name, typeof arch === 'string' ? arch : undefined);
      if (!name) continue; // rope_freqs and the like: configFromGguf refuses what matters
      const shape = [...t.dims].reverse();
      const permuted = rotaryHeadDim !== undefined && /\.self_attn\.[qk]_proj\./.test(name);
      if (permuted && shape[0] % rotaryHeadDim !== 0)
        throw new ConvertError(file, `tensor "${t.name}" has ${shape[0]} rows, not whole heads of ${rotaryHeadDim}`);
      entries.set(name, {
        info: { name, file, dtype: t.type.name, shape, offset: t.offset, bytes: t.bytes },
        gguf: t,
        rotaryHeadDim: permuted ? rotaryHeadDim : undefined,
      });
    }
    return new GgufCheckpoint(header, openForReading(file), entries);
  }

  get(name: string): TensorInfo | undefined {
    return this.tensors.get(name);
  }

  require(name: string, shape: number[]): TensorInfo {
    const t = this.tensors.get(name);
    if (!t) throw new ConvertError(this.dir, `the GGUF file has no tensor for "${name}"`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new ConvertError(t.file, `tensor "${name}" has shape [${t.shape}] but the file's metadata implies [${shape}]`);
    }
    return t;
  }

  readRows(t: TensorInfo, r0: number, r1: number): Float32Array {
    const e = this.entries.get(t.name);
    if (!e) throw new ConvertError(this.dir, `no tensor "${t.name}"`);
    const cols = rowLength(t.shape);
    const out = new Float32Array((r1 - r0) * cols);
    if (e.rotaryHeadDim === undefined) this.readElements(e.gguf, r0 * cols, r1 * cols, out, 0);
    else {
      for (let r = r0; r < r1; r++) {
        const g = ggufRow(r, e.rotaryHeadDim);
        this.readElements(e.gguf, g * cols, (g + 1) * cols, out, (r - r0) * cols);
      }
    }
    checkFinite(out, this.dir, t.name, (file, detail) => new ConvertError(file, detail));
    return out;
  }

  readAll(t: TensorInfo): Float32Array {
    return this.readRows(t, 0, t.shape[0]);
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  /** Values [from, to) of a tensor in storage order, into out[at..]; whole blocks are read and sliced. */
  private readElements(t: GgufTensor, from: number, to: number, out: Float32Array, at: number): void {
    const per = t.type.blockElements;
    const b0 = Math.floor(from / per);
    const b1 = Math.ceil(to / per);
    const raw = new Uint8Array((b1 - b0) * t.type.blockBytes);
    const start = t.offset + b0 * t.type.blockBytes;
    for (let got = 0; got < raw.length; ) {
      const k = fs.readSync(this.fd, raw, got, raw.length - got, start + got);
      if (k === 0) throw new ConvertError(this.dir, `ends inside tensor "${t.name}" (truncated file?)`);
      got += k;
    }
    if (from === b0 * per && to === b1 * per) {
      t.type.dequantize(raw, 0, b1 - b0, out, at);
      return;
    }
    const all = new Float32Array((b1 - b0) * per);
    t.type.dequantize(raw, 0, b1 - b0, all, 0);
    out.set(all.subarray(from - b0 * per, to - b0 * per), at);
  }
}

/**
 * The GGUF row that holds Hugging Face row `r` of a q/k weight: llama.cpp's permute maps row
 * (head, half i, j) of Hugging Face's layout to (head, j, i).
 */
export function ggufRow(r: number, headDim: number): number {
  const head = Math.floor(r / headDim);
  const w = r % headDim;
  const halfDim = headDim / 2;
  const i = Math.floor(w / halfDim);
  const j = w % halfDim;
  return head * headDim + j * 2 + i;
}
