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

/** Rotary frequencies must be finite and positive: a base of 1 or less, or a tiny scaling factor, gives garbage or Infinity. */
function checkedInvFreq(config: Record<string, unknown>, headDim: number, theta: number, err: (d: string) => Error): Float64Array {
  if (theta <= 1) throw err(`rope_theta must be greater than 1, got ${theta}`);
  const inv = rotaryInvFreq(config, headDim, theta, err);
  if (!inv.every((f) => Number.isFinite(f) && f > 0)) throw err('rope_theta and rope_scaling give non-finite rotary frequencies');
  return inv;
}

/** inv_freq as transformers computes it, with the rope_scaling types code models use. */
function rotaryInvFreq(config: Record<string, unknown>, headDim: number, theta: number, err: (d: string) => Error): Float64Array {
  const half = headDim / 2;
  const inv = new Float64Array(half);
  // transformers computes base ** (arange(0, dim, 2).float() / dim) in float32
  for (let i = 0; i < half; i++) inv[i] = Math.fround(1 / Math.fround(theta ** Math.fround((2 * i) / headDim)));
  const rs = config.rope_scaling as Record<string, unknown> | null | undefined;
  if (rs == null) return inv;
  if (typeof rs !== 'object') throw err('rope_scaling must be an object or null');
  const type = rs.rope_type ?? rs.type;
  const factor = typeof rs.factor === 'number' && rs.factor > 0 ? rs.factor : NaN;
  if (type === 'default') return inv;
  if (type === 'linear') {
    if (Number.isNaN(factor)) throw err('rope_scaling.factor must be a positive number');
    return inv.map((f) => f / factor);
  }
  if (type === 'llama3') {
    const low = Number(rs.low_freq_factor);
    const high = Number(rs.high_freq_factor);
    const orig = Number(rs.original_max_position_embeddings);
    if (!(factor > 0 && low > 0 && high > low && orig > 0))
      throw err('rope_scaling (llama3) needs factor, low_freq_factor < high_freq_factor and original_max_position_embeddings');
    const lowWave = orig / low;
    const highWave = orig / high;
    return inv.map((f) => {
      const wave = (2 * Math.PI) / f;
      if (wave < highWave) return f;
      if (wave > lowWave) return f / factor;
      const smooth = (orig / wave - low) / (high - low);
      return (1 - smooth) * (f / factor) + smooth * f;
    });
  }
  throw err(`rope_scaling type ${JSON.stringify(type)} is not supported (default, linear, llama3)`);
}
