/**
 * The loops small models fall into, in the words of the completion's repetitionGuard filter (which cuts
 * them) and of the stop rule that ends a generation as soon as one shows (TextStopper, `stopOnLoop`): a
 * 96-token `f(s, t0, t0, t0, ...` costs seconds on a 0.5B model on a CPU, and all but its start is cut.
 */

/** A line that repeats the statement above it: equal but for indentation, 4+ characters with a letter or digit. */
export function repeatsStatementAbove(lines: readonly string[], i: number): boolean {
  if (i < 1) return false;
  const line = lines[i].trim();
  return line.length >= 4 && /[\p{L}\p{N}]/u.test(line) && line === lines[i - 1].trim();
}

/** The third identical line in a row (short ones too: `a()`, `}`). */
export function thirdIdenticalLine(lines: readonly string[], i: number): boolean {
  return i >= 2 && lines[i].trim() !== '' && lines[i] === lines[i - 1] && lines[i] === lines[i - 2];
}

/** Longest chunk a trailing loop is looked for with (repetitionGuard's longest). */
const MAX_PERIOD = 48;
/**
 * How long a loop must run at the end of an unfinished line before generation stops for it. Shorter runs are
 * often data (`0, 0, 0, 0`) that the model ends by itself; 48 characters is sixteen `0, ` or ten `, ctx`.
 */
export const LOOP_STOP_CHARS = 48;

/**
 * Whether `line` (unfinished, still being written) ends in a loop that has run LOOP_STOP_CHARS characters:
 * 3 or more copies of a chunk of up to 48 characters (4 or more under 4 characters), the last maybe cut
 * short. A chunk of one repeated character is a ruler (`# -----`), not a loop.
 */
export function endsInLongLoop(line: string): boolean {
  const n = line.length;
  if (n < LOOP_STOP_CHARS) return false;
  for (let p = 1; p <= MAX_PERIOD && 2 * p <= n; p++) {
    // Characters at the end that equal the one a period before: the loop's length less its first copy.
    let k = 0;
    while (k + p < n && line[n - 1 - k] === line[n - 1 - k - p]) k++;
    const run = k + p;
    if (run < LOOP_STOP_CHARS || run / p < (p < 4 ? 4 : 3)) continue;
    const chunk = line.slice(n - p);
    if (new Set(chunk.replace(/\s/g, '')).size >= 2) return true;
  }
  return false;
}
