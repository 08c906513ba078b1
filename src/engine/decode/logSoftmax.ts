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

/** log softmax(row)[id]: one token's log-probability, without writing the whole row. */
export function tokenLogprob(row: ArrayLike<number>, id: number): number {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
  if (m === -Infinity) return -Infinity;
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i] - m);
  return row[id] - m - Math.log(s);
}
