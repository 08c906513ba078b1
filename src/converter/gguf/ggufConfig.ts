import { ConvertError } from '../errors';
import type { GgufHeader } from './ggufFile';
import { metaNumber, metaString } from './ggufMeta';

/**
 * The Hugging Face config.json of the model a GGUF file holds, from llama.cpp's metadata keys
 * (`<arch>.embedding_length` and the like, llama-arch.cpp), for the architectures whose GGUF tensors map back to
 * Hugging Face's one to one: qwen2 (Qwen2.5-Coder and its fine-tunes), llama (SmolLM2, DeepSeek-Coder, CodeLlama)
 * and starcoder2. Other architectures are refused by name.
 */
export type GgufArchitecture = 'qwen2' | 'llama' | 'starcoder2';

export function configFromGguf(h: GgufHeader, eos: number[], bos: number | undefined): Record<string, unknown> {
  const arch = metaString(h, 'general.architecture');
  if (arch !== 'qwen2' && arch !== 'llama' && arch !== 'starcoder2') {
    throw new ConvertError(
      h.file,
      `holds a "${arch}" model; Ghostline converts GGUF files of qwen2 (Qwen2.5-Coder), llama (SmolLM2, DeepSeek-Coder) and starcoder2 models`,
    );
  }
  const starcoder = arch === 'starcoder2';
  const int = (key: string, fallback?: number): number => {
    const v = metaNumber(h, `${arch}.${key}`, fallback);
    if (!Number.isSafeInteger(v) || v <= 0) throw new ConvertError(h.file, `metadata ${arch}.${key} is ${v}, not a positive integer`);
    return v;
  };
  const hidden = int('embedding_length');
  const heads = int('attention.head_count');
  const kvHeadsValue = h.metadata.get(`${arch}.attention.head_count_kv`);
  if (Array.isArray(kvHeadsValue)) throw new ConvertError(h.file, 'has a different number of key/value heads per layer, which Ghostline does not convert');
  const kvHeads = int('attention.head_count_kv', heads);
  const headDim = int('attention.key_length', Math.floor(hidden / heads));
  const rotated = int('rope.dimension_count', headDim);
  if (rotated !== headDim)
    throw new ConvertError(h.file, `rotates ${rotated} of each head's ${headDim} dimensions; Ghostline converts models that rotate all of them`);
  if (h.tensors.has('rope_freqs.weight')) {
    throw new ConvertError(h.file, "carries per-dimension rotary factors (Llama 3.1's rope scaling), which Ghostline does not convert from a GGUF file");
  }
  const embedding = h.tensors.get('token_embd.weight');
  if (embedding?.dims.length !== 2) throw new ConvertError(h.file, 'has no token_embd.weight: not a language model');
  const config: Record<string, unknown> = {
    architectures: [{ qwen2: 'Qwen2ForCausalLM', llama: 'LlamaForCausalLM', starcoder2: 'Starcoder2ForCausalLM' }[arch]],
    model_type: arch,
    hidden_size: hidden,
    intermediate_size: int('feed_forward_length'),
    num_hidden_layers: int('block_count'),
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    ...(headDim * heads !== hidden ? { head_dim: headDim } : {}),
    hidden_act: starcoder ? 'gelu_pytorch_tanh' : 'silu',
    max_position_embeddings: int('context_length', 4096),
    ...(starcoder
      ? { norm_epsilon: metaNumber(h, `${arch}.attention.layer_norm_epsilon`, 1e-5), use_bias: h.tensors.has('blk.0.attn_q.bias') }
      : { rms_norm_eps: metaNumber(h, `${arch}.attention.layer_norm_rms_epsilon`, arch === 'qwen2' ? 1e-6 : 1e-5) }),
    rope_theta: metaNumber(h, `${arch}.rope.freq_base`, 10000),
    rope_scaling: ropeScaling(h, arch),
    vocab_size: embedding.dims[1],
    tie_word_embeddings: !h.tensors.has('output.weight'),
    attention_bias: arch === 'llama' && h.tensors.has('blk.0.attn_q.bias'),
    mlp_bias: false,
    ...(eos.length ? { eos_token_id: eos.length === 1 ? eos[0] : eos } : {}),
    ...(bos !== undefined ? { bos_token_id: bos } : {}),
  };
  return config;
}

function ropeScaling(h: GgufHeader, arch: string): Record<string, unknown> | null {
  const type = h.metadata.get(`${arch}.rope.scaling.type`);
  if (type === undefined || type === 'none') return null;
  if (type === 'linear') return { type: 'linear', factor: metaNumber(h, `${arch}.rope.scaling.factor`) };
  throw new ConvertError(h.file, `uses rope scaling ${JSON.stringify(type)}, which Ghostline does not convert (none and linear are)`);
}
