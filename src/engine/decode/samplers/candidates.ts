/**
 * The token candidates a sampler chain works on: parallel arrays of ids and logits.
 * Starts as the whole vocabulary (identity ids) and shrinks as samplers truncate it.
 * Buffers are allocated once per vocabulary size and reused for every token.
 */
export class Candidates {
  readonly ids: Int32Array;
  readonly logits: Float32Array;
  size = 0;
  /** ids[i] === i for every i < size (nothing truncated or reordered yet). */
  identity = true;
  /** Sorted by logit, highest first. */
  sortedDesc = false;
  private readonly scratchIds: Int32Array;
  private readonly scratchLogits: Float32Array;
  /** 0, 1, 2, ...: what `ids` is reset to after a truncation. */
  private identityIdsCache: Int32Array | null = null;

  constructor(readonly capacity: number) {
    this.ids = new Int32Array(capacity);
    this.logits = new Float32Array(capacity);
    this.scratchIds = new Int32Array(capacity);
    this.scratchLogits = new Float32Array(capacity);
  }

  /** Loads a full row of logits (length >= capacity is cut to capacity). */
  reset(row: ArrayLike<number>): this {
    const n = Math.min(this.capacity, row.length);
    if (row instanceof Float32Array)
      this.logits.set(row.subarray(0, n)); // a memcpy: rows are 150k wide
    else for (let i = 0; i < n; i++) this.logits[i] = row[i];
    if (!this.identity || this.size < n) this.ids.set(this.identityIds().subarray(0, n)); // a memcpy, not a loop
    this.size = n;
    this.identity = true;
    this.sortedDesc = false;
    return this;
  }

  /**
   * Loads only the k highest of a row, sorted highest first: the same candidates as reset(row) then
   * keepTop(k), without copying the whole row first.
   */
  resetTop(row: Float32Array, k: number): this {
    const n = Math.min(this.capacity, row.length);
    if (k >= n) {
      this.reset(row);
      this.keepTop(k);
      return this;
    }
    const order = topIndices(row, n, k);
    for (let i = 0; i < order.length; i++) {
      this.ids[i] = order[i];
      this.logits[i] = row[order[i]];
    }
    this.size = order.length;
    this.identity = false;
    this.sortedDesc = true;
    return this;
  }

  private identityIds(): Int32Array {
    if (!this.identityIdsCache) {
      this.identityIdsCache = new Int32Array(this.capacity);
      for (let i = 0; i < this.capacity; i++) this.identityIdsCache[i] = i;
    }
    return this.identityIdsCache;
  }

  maxLogit(): number {
    if (this.sortedDesc) return this.logits[0];
    const l = this.logits;
    let m = -Infinity;
    for (let i = 0; i < this.size; i++) if (l[i] > m) m = l[i];
    return m;
  }

  argmaxId(): number {
    if (this.sortedDesc) return this.ids[0];
    return this.ids[argmaxOf(this.logits, this.size)];
  }

  /** log(sum(exp(logits))), stable. */
  logSumExp(): number {
    const m = this.maxLogit();
    if (m === -Infinity) return -Infinity;
    const l = this.logits;
    let s = 0;
    for (let i = 0; i < this.size; i++) s += Math.exp(l[i] - m);
    return m + Math.log(s);
  }

  /** Keeps the k highest candidates, sorted highest first. Partial selection: O(n log k), no full sort. */
  keepTop(k: number): void {
    if (k >= this.size) {
      if (!this.sortedDesc) this.sortAll();
      return;
    }
    this.select(topIndices(this.logits, this.size, k));
  }

  /** Keeps exactly the candidates at `order` (indices into the current arrays, highest logit first). */
  select(order: Int32Array, count = order.length): void {
    for (let i = 0; i < count; i++) {
      this.scratchIds[i] = this.ids[order[i]];
      this.scratchLogits[i] = this.logits[order[i]];
    }
    this.ids.set(this.scratchIds.subarray(0, count));
    this.logits.set(this.scratchLogits.subarray(0, count));
    this.size = count;
    this.identity = false;
    this.sortedDesc = true;
  }

  /** Keeps the first n candidates (only meaningful when sorted). */
  truncate(n: number): void {
    if (n < this.size) {
      this.size = n;
      this.identity = false;
    }
  }

  /** Keeps the candidates whose logit is at least `threshold`, in their current order. */
  keepAtLeast(threshold: number): void {
    let w = 0;
    for (let r = 0; r < this.size; r++) {
      if (this.logits[r] >= threshold) {
        this.ids[w] = this.ids[r];
        this.logits[w] = this.logits[r];
        w++;
      }
    }
    if (w < this.size) this.identity = false;
    this.size = w;
  }

  private sortAll(): void {
    this.select(topIndices(this.logits, this.size, this.size));
  }
}

/**
 * Indices of the k largest values among values[0..n), largest first.
 * A bounded min-heap: most of a large vocabulary fails the first comparison against the heap's minimum.
 */
export function topIndices(values: Float32Array, n: number, k: number): Int32Array {
  k = Math.max(0, Math.min(k, n));
  if (k === 0) return new Int32Array(0);
  if (k <= SMALL_K) return topIndicesSmall(values, n, k);
  const heap = new Int32Array(k); // indices; min-heap on values
  let size = 0;
  const less = (a: number, b: number) => values[a] < values[b] || (values[a] === values[b] && a > b);
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && less(heap[l], heap[m])) m = l;
      if (r < size && less(heap[r], heap[m])) m = r;
      if (m === i) return;
      const t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
  };
  let floor = Infinity; // the heap's minimum value, once the heap is full
  for (let idx = 0; idx < n; idx++) {
    if (size < k) {
      let i = size++;
      heap[i] = idx;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!less(heap[i], heap[p])) break;
        const t = heap[i];
        heap[i] = heap[p];
        heap[p] = t;
        i = p;
      }
      if (size === k) floor = values[heap[0]];
    } else if (values[idx] > floor) {
      // Later indices lose ties, so "greater than the heap's minimum" is the whole test (the hot path).
      heap[0] = idx;
      siftDown(0);
      floor = values[heap[0]];
    }
  }
  // Pop the minimum repeatedly: fills the result from the back, largest first.
  const out = new Int32Array(k);
  for (let w = k - 1; w >= 0; w--) {
    out[w] = heap[0];
    heap[0] = heap[--size];
    siftDown(0);
  }
  return out;
}

/** Up to this k, a sorted insertion buffer beats the heap (top-k 8 over 152k logits: 0.25 against 0.4 ms). */
const SMALL_K = 64;

/**
 * topIndices for small k: the k best so far, kept sorted (highest first); most values fail the one comparison
 * against the k-th best. Equal values keep index order (a later index never passes an equal one).
 */
function topIndicesSmall(values: Float32Array, n: number, k: number): Int32Array {
  const ids = new Int32Array(k);
  const best = new Float64Array(k);
  let size = 0;
  let floor = -Infinity; // the k-th best value once k are held
  for (let idx = 0; idx < n; idx++) {
    const v = values[idx];
    if (size === k && !(v > floor)) continue;
    let i = size < k ? size++ : k - 1;
    while (i > 0 && best[i - 1] < v) {
      best[i] = best[i - 1];
      ids[i] = ids[i - 1];
      i--;
    }
    best[i] = v;
    ids[i] = idx;
    if (size === k) floor = best[k - 1];
  }
  return ids;
}

/** The index of the largest of values[0..n) (the lowest index among equals); 0 when n is 0. */
export function argmaxOf(values: ArrayLike<number>, n = values.length): number {
  let best = 0;
  let bestValue = n > 0 ? values[0] : -Infinity;
  for (let i = 1; i < n; i++) {
    const v = values[i];
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}
