import { median, round } from './stats';

export interface ThroughputRow {
  prefill_tokens_per_s: number;
  decode_tokens_per_s: number;
}

/** Runs a generation of `n` new tokens from the same prompt text, cold. */
export type Generation = (n: number) => Promise<unknown>;

/**
 * Two engines timed the same way, round by round (so machine noise hits both alike): wall time of a
 * 1-token generation (prefill) and of an N-token one; decode rate = (N - 1) / (T(N) - T(1)).
 */
export async function interleaved(
  ours: Generation,
  theirs: Generation,
  opts: { rounds: number; promptTokens: number; newTokens: number },
): Promise<{ ours: ThroughputRow; theirs: ThroughputRow }> {
  const time = async (g: Generation, n: number) => {
    const t0 = performance.now();
    await g(n);
    return performance.now() - t0;
  };
  await time(ours, 2); // warm both
  await time(theirs, 2);
  const o1: number[] = [];
  const oN: number[] = [];
  const t1: number[] = [];
  const tN: number[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    o1.push(await time(ours, 1));
    t1.push(await time(theirs, 1));
    oN.push(await time(ours, opts.newTokens));
    tN.push(await time(theirs, opts.newTokens));
  }
  const row = (one: number[], n: number[]): ThroughputRow => ({
    prefill_tokens_per_s: round((opts.promptTokens / median(one)) * 1000, 1),
    decode_tokens_per_s: round(((opts.newTokens - 1) / (median(n) - median(one))) * 1000, 1),
  });
  return { ours: row(o1, oN), theirs: row(t1, tN) };
}
