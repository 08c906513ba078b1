import { median, round } from './stats';

export interface ThroughputRow {
  prefill_tokens_per_s: number;
  decode_tokens_per_s: number;
  /** How decode_tokens_per_s was taken: 'differential' = (N - 1) / (T(N) - T(1)) of the medians; 'in-run' =
   *  the median over rounds of (N - 1) / (time of the Nth token - time of the first) within the N-token run. */
  decode_method?: 'differential' | 'in-run';
  /** (N - 1) / (T(N) - T(1)) of the medians, whichever method the row reports. */
  decode_tokens_per_s_differential?: number;
  /** Median wall times of the 1-token and the N-token generation (ms). */
  t1_ms?: number;
  tN_ms?: number;
  /** Decode rate of each round (by the row's method): the spread. */
  decode_tokens_per_s_rounds?: number[];
}

/** When a generation's first and last new tokens came out (performance.now()), as the engine streams them. */
export interface TokenTimes {
  firstTokenAt: number;
  lastTokenAt: number;
  tokens: number;
}

/** Runs a generation of `n` new tokens from the same prompt text, cold; may report its token times. */
export type Generation = (n: number) => Promise<unknown>;

const isTokenTimes = (x: unknown): x is TokenTimes =>
  typeof x === 'object' && x !== null && typeof (x as TokenTimes).firstTokenAt === 'number' && typeof (x as TokenTimes).lastTokenAt === 'number';

/**
 * Engines timed the same way, round by round (so machine noise hits all alike): wall time of a 1-token
 * generation (prefill = prompt tokens / T(1)) and of an N-token one, each engine in turn. Decode rate =
 * (N - 1) / (T(N) - T(1)) of the medians; or, when every engine reports when its first and last new token
 * came out (TokenTimes), the median over rounds of (N - 1) / (last - first) within the N-token run: the
 * same quantity without prefill's round-to-round noise, which swamps the difference at long prompts on a
 * busy machine. Any number of engines (object key order is the order within a round).
 */
export async function interleavedMany<K extends string>(
  engines: Record<K, Generation>,
  opts: { rounds: number; promptTokens: number | Record<K, number>; newTokens: number },
): Promise<Record<K, ThroughputRow>> {
  const names = Object.keys(engines) as K[];
  const time = async (g: Generation, n: number): Promise<[number, number | null]> => {
    const t0 = performance.now();
    const r = await g(n);
    const ms = performance.now() - t0;
    // In-run decode: the tokens after the first over the time after the first (prefill's noise cancels).
    const inRun = isTokenTimes(r) && r.tokens === n && n > 1 && r.lastTokenAt > r.firstTokenAt ? ((n - 1) / (r.lastTokenAt - r.firstTokenAt)) * 1000 : null;
    return [ms, inRun];
  };
  for (const k of names) await time(engines[k], 2); // warm every engine
  const one = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  const many = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  const inRun = Object.fromEntries(names.map((k) => [k, [] as (number | null)[]])) as Record<K, (number | null)[]>;
  for (let r = 0; r < opts.rounds; r++) {
    for (const k of names) one[k].push((await time(engines[k], 1))[0]);
    for (const k of names) {
      const [ms, rate] = await time(engines[k], opts.newTokens);
      many[k].push(ms);
      inRun[k].push(rate);
    }
  }
  // One method for all engines of a comparison: in-run only when every engine reported its token times.
  const allInRun = names.every((k) => inRun[k].every((x) => x !== null));
  const rate = (ms: number) => round(((opts.newTokens - 1) / ms) * 1000, 1);
  const out = {} as Record<K, ThroughputRow>;
  for (const k of names) {
    const prompt = typeof opts.promptTokens === 'number' ? opts.promptTokens : opts.promptTokens[k];
    const t1 = median(one[k]);
    const tN = median(many[k]);
    const differential = rate(tN - t1);
    const rounds = allInRun ? inRun[k].map((x) => round(x as number, 1)) : many[k].map((t, i) => rate(t - one[k][i]));
    out[k] = {
      prefill_tokens_per_s: round((prompt / t1) * 1000, 1),
      decode_tokens_per_s: allInRun ? median(rounds) : differential,
      decode_method: allInRun ? 'in-run' : 'differential',
      decode_tokens_per_s_differential: differential,
      t1_ms: round(t1, 1),
      tN_ms: round(tN, 1),
      decode_tokens_per_s_rounds: rounds,
    };
  }
  return out;
}

/**
 * Two engines timed the same way, round by round (so machine noise hits both alike): wall time of a
 * 1-token generation (prefill) and of an N-token one; decode rate = (N - 1) / (T(N) - T(1)).
 */
export async function interleaved(
  ours: Generation,
  theirs: Generation,
  opts: { rounds: number; promptTokens: number; newTokens: number },
): Promise<{ ours: ThroughputRow; theirs: ThroughputRow }> {
  return interleavedMany({ ours, theirs }, opts);
}
