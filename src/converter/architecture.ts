import { checkedInvFreq } from '../engine/model/rotary';
import { ConvertError } from './errors';

/**
 * What the lean graph needs to know about a checkpoint, read from its config.json. Three families share one
 * pre-norm decoder layout; they differ in norms, biases and the MLP:
 * - llama (SmolLM2, CodeLlama, DeepSeek-Coder): RMSNorm, SiLU-gated MLP, optional attention/MLP biases;
 * - qwen2 (Qwen2.5-Coder): llama with q/k/v biases;
 * - starcoder2: LayerNorm with bias, biases everywhere, c_fc -> gelu(tanh) -> c_proj.
 */
export interface Architecture {
  modelType: 'llama' | 'qwen2' | 'starcoder2';
  hidden: number;
  intermediate: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  norm: 'rms' | 'layer';
  eps: number;
  mlp: 'silu-gated' | 'gelu-tanh';
  qkvBias: boolean;
  oBias: boolean;
  mlpBias: boolean;
  tied: boolean;
  maxPositions: number;
  /** Rotary inverse frequencies (head_dim / 2 of them), scaling applied. */
  invFreq: Float64Array;
}

export function readArchitecture(config: Record<string, unknown>, file: string): Architecture {
  const mt = config.model_type;
  const err = (detail: string) => new ConvertError(file, detail);
  if (mt !== 'llama' && mt !== 'qwen2' && mt !== 'starcoder2') {
    throw err(
      `model_type ${JSON.stringify(mt)} is not supported: Ghostline converts llama (SmolLM2, CodeLlama, DeepSeek-Coder), qwen2 (Qwen2.5-Coder) and starcoder2`,
    );
  }
  const int = (key: string, fallback?: number): number => {
    const v = config[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) throw err(`${key} must be a positive integer, got ${JSON.stringify(config[key])}`);
    return v;
  };
  const real = (key: string, fallback: number): number => {
    const v = config[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw err(`${key} must be a positive number, got ${JSON.stringify(config[key])}`);
    return v;
  };
  const hidden = int('hidden_size');
  const heads = int('num_attention_heads');
  const kvHeads = int('num_key_value_heads', heads);
  if (config.head_dim == null && hidden % heads !== 0) throw err(`hidden_size ${hidden} is not a multiple of num_attention_heads ${heads}`);
  const headDim = config.head_dim == null ? hidden / heads : int('head_dim');
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) throw err(`head size ${headDim} (hidden_size / num_attention_heads) must be an even integer`);
  if (heads % kvHeads !== 0) throw err(`num_attention_heads ${heads} is not a multiple of num_key_value_heads ${kvHeads}`);
  const act = config.hidden_act ?? (mt === 'starcoder2' ? 'gelu_pytorch_tanh' : 'silu');
  const starcoder = mt === 'starcoder2';
  if (starcoder ? act !== 'gelu_pytorch_tanh' && act !== 'gelu_new' : act !== 'silu') {
    throw err(`hidden_act ${JSON.stringify(act)} is not supported for ${mt}`);
  }
  const flag = (key: string, fallback: boolean): boolean => {
    const v = config[key] ?? fallback;
    if (typeof v !== 'boolean') throw err(`${key} must be true or false`);
    return v;
  };
  const bias = starcoder ? flag('use_bias', true) : flag('attention_bias', false);
  const maxPositions = int('max_position_embeddings', 2048);
  return {
    modelType: mt,
    hidden,
    intermediate: int('intermediate_size'),
    layers: int('num_hidden_layers'),
    heads,
    kvHeads,
    headDim,
    vocab: int('vocab_size'),
    norm: starcoder ? 'layer' : 'rms',
    eps: starcoder ? real('norm_epsilon', 1e-5) : real('rms_norm_eps', 1e-6),
    mlp: starcoder ? 'gelu-tanh' : 'silu-gated',
    qkvBias: mt === 'qwen2' || bias,
    oBias: bias,
    mlpBias: starcoder ? bias : flag('mlp_bias', false),
    tied: flag('tie_word_embeddings', mt === 'starcoder2'), // transformers' defaults per config class
    maxPositions,
    invFreq: checkedInvFreq(config, headDim, real('rope_theta', 10000), err),
  };
}
