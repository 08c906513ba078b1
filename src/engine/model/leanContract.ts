/**
 * Names of Ghostline's own decoder contract ("lean"), written by the checkpoint converter (src/converter) and
 * fed by the runtime (leanCache.ts, onnxModel.ts).
 *
 * Why not the Hugging Face contract: onnxruntime-node copies every fetched output into a fresh JS buffer, and
 * a `present.*` output is the whole KV cache, so each step moved the cache twice. Here the cache lives in
 * JS buffers that go in as inputs (inputs are not copied) with room for `cap` positions, and the graph
 * returns only the new rows, which the runtime writes into those buffers itself:
 *
 * - `input_ids` int64 [batch, seq], `position_ids` int64 [batch, seq] (rotary positions);
 * - `attention_bias` float32 [seq, cap + seq]: 0 where query i may see a key, -inf elsewhere; the first `cap`
 *   columns are the cache slots (valid below the cached length), the last `seq` the new tokens (causal);
 * - `cache.{i}.key` float32 [batch, kv_heads, head_dim, cap] (keys stored transposed, as the score product
 *   wants them) and `cache.{i}.value` float32 [batch, kv_heads, cap, head_dim];
 * - `num_logits_to_keep` int64 scalar: logits for the last N positions (0: all);
 * - outputs `logits` float32 [batch, kept, vocab] and `new_kv` float32 [2 * layers * batch, seq, kv_heads * head_dim]
 *   (layer 0 keys after rotary for each batch row, layer 0 values, layer 1 keys, ...);
 * - optional output `logits_lse` float32 [batch, kept]: log(sum(exp(row))) of each logits row, which every
 *   token's log-probability needs (the confidence gate). onnxruntime's vectorized Exp and ReduceSum do it in
 *   about 0.15 ms for a 152k vocabulary, JavaScript's Math.exp in about 2 ms per token. Graphs converted
 *   before it have no such output: the runtime computes it then.
 *
 * On the GPU the graph is loaded with one more output per cache input, `cache_out.{i}.key` / `.value`: the
 * cache with this run's rows written in, left on the GPU and fed back as the next run's cache, so a decode step
 * does not upload the whole cache (deviceCacheGraph.ts makes it at load; the file on disk is the one above).
 */
export const LEAN_GRAPH_NAME = 'ghostline-lean-v1';

export const leanNames = {
  inputIds: 'input_ids',
  positionIds: 'position_ids',
  attentionBias: 'attention_bias',
  keep: 'num_logits_to_keep',
  logits: 'logits',
  logitsLse: 'logits_lse',
  newKv: 'new_kv',
  cacheKey: (layer: number) => `cache.${layer}.key`,
  cacheValue: (layer: number) => `cache.${layer}.value`,
  /** Outputs of the device cache variant only (deviceCacheGraph.ts): the cache with this run's rows written in. */
  cacheOutKey: (layer: number) => `cache_out.${layer}.key`,
  cacheOutValue: (layer: number) => `cache_out.${layer}.value`,
} as const;
