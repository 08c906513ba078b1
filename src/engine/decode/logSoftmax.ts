/** log softmax of row `r` of a [rows, vocab] block, into `out`. */
export function logSoftmaxRow(logits: Float32Array, r: number, vocab: number, out: Float32Array): Float32Array {
  const off = r * vocab;
  let m = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[off + i] > m) m = logits[off + i];
  let s = 0;
  for (let i = 0; i < vocab; i++) s += Math.exp(logits[off + i] - m);
  const lse = m + Math.log(s);
  for (let i = 0; i < vocab; i++) out[i] = logits[off + i] - lse;
  return out;
}

/** log(sum(exp(row))), stable; -Infinity for a row of -Infinity. */
export function logSumExp(row: ArrayLike<number>): number {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
  if (m === -Infinity) return -Infinity;
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i] - m);
  return m + Math.log(s);
}

/**
 * log softmax(row)[id]: one token's log-probability, without writing the whole row. `lse` is the row's
 * log-sum-exp when the model already computed it (a pass of Math.exp over 152k logits costs about 2 ms).
 */
export function tokenLogprob(row: ArrayLike<number>, id: number, lse = logSumExp(row)): number {
  return lse === -Infinity ? -Infinity : row[id] - lse;
}

/**
 * The log-sum-exp of `row` without its columns from `from` on (a padded vocabulary's unused columns, about to
 * be masked), from the log-sum-exp `lse` of the whole row: only the removed columns are read. Null when they
 * hold so much of the mass that the difference would lose precision: then compute it from the masked row.
 */
export function logSumExpWithout(row: Float32Array, from: number, lse: number): number | null {
  let removed = 0;
  for (let i = from; i < row.length; i++) removed += Math.exp(row[i] - lse);
  return removed < 0.5 ? lse + Math.log1p(-removed) : null;
}
