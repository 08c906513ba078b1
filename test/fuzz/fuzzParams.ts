/**
 * Settings of every property-based test: a fixed seed and a few thousand cases in `npm test` (CI is
 * deterministic), more cases and a fresh seed with `npm run test:fuzz` (FUZZ_SEED, FUZZ_SCALE). A failure prints
 * the seed and the path fast-check needs to replay it.
 */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 42);
const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1));

export function fuzzParams(runs: number): { seed: number; numRuns: number } {
  return { seed: FUZZ_SEED, numRuns: Math.round(runs * SCALE) };
}
