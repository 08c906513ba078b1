/**
 * L2-regularised logistic regression by Newton's method (IRLS) on standardised features: a few dozen
 * features and a few thousand samples solve in milliseconds, deterministically, with no dependency.
 */
export interface LogisticFit {
  mean: number[];
  scale: number[];
  weights: number[];
  bias: number;
  iterations: number;
}

export function fitLogistic(xs: readonly number[][], ys: readonly number[], l2 = 1, maxIter = 50): LogisticFit {
  const n = xs.length;
  if (n === 0) throw new Error('no samples to fit');
  const d = xs[0].length;
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  for (const x of xs) for (let j = 0; j < d; j++) mean[j] += x[j] / n;
  for (const x of xs) for (let j = 0; j < d; j++) scale[j] += (x[j] - mean[j]) ** 2 / n;
  // A constant feature (its spread only rounding error: 1 - 1e-17) stays at weight 0, with a scale that survives rounding.
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]) > 1e-6 ? Math.sqrt(scale[j]) : 1;
  const z = xs.map((x) => x.map((v, j) => (v - mean[j]) / scale[j]));
  // Parameters: [bias, w_1..w_d]; the bias is not regularised.
  const theta = new Array<number>(d + 1).fill(0);
  let it = 0;
  for (; it < maxIter; it++) {
    const grad = new Array<number>(d + 1).fill(0);
    const hess = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i++) {
      const row = [1, ...z[i]];
      const p = sigmoid(dot(theta, row));
      const w = Math.max(p * (1 - p), 1e-9);
      for (let a = 0; a <= d; a++) {
        grad[a] += (p - ys[i]) * row[a];
        for (let b = 0; b <= a; b++) hess[a][b] += w * row[a] * row[b];
      }
    }
    for (let a = 0; a <= d; a++) for (let b = 0; b < a; b++) hess[b][a] = hess[a][b];
    for (let a = 1; a <= d; a++) {
      grad[a] += l2 * theta[a];
      hess[a][a] += l2;
    }
    const step = solve(hess, grad);
    let change = 0;
    for (let a = 0; a <= d; a++) {
      theta[a] -= step[a];
      change = Math.max(change, Math.abs(step[a]));
    }
    if (change < 1e-8) break;
  }
  return { mean, scale, weights: theta.slice(1), bias: theta[0], iterations: it + 1 };
}

export function sigmoid(t: number): number {
  return t >= 0 ? 1 / (1 + Math.exp(-t)) : Math.exp(t) / (1 + Math.exp(t));
}

export function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Solves A x = b by Gaussian elimination with partial pivoting (A is small and positive definite here). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const piv = m[c][c] || 1e-12;
    for (let r = c + 1; r < n; r++) {
      const f = m[r][c] / piv;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r][n];
    for (let k = r + 1; k < n; k++) s -= m[r][k] * x[k];
    x[r] = s / (m[r][r] || 1e-12);
  }
  return x;
}
