/**
 * Rotary position embeddings: the inverse frequencies transformers computes from a config (shared by the
 * converter, which bakes them into the lean graph's cos/sin tables, and the runtime, which moves cached keys
 * to other positions), and the rotation of cached keys by a position offset.
 */

/** Rotary frequencies; must be finite and positive (a base of 1 or less, or a tiny scaling factor, gives garbage or Infinity). */
export function checkedInvFreq(config: Record<string, unknown>, headDim: number, theta: number, err: (d: string) => Error): Float64Array {
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

/** The frequencies of a model folder's config, or null when its rotary settings are missing or not understood. */
export function configInvFreq(config: Record<string, unknown>, headDim: number): Float64Array | null {
  const theta = typeof config.rope_theta === 'number' ? config.rope_theta : 10000;
  try {
    return checkedInvFreq(config, headDim, theta, (d) => new Error(d));
  } catch {
    return null;
  }
}
