/** How a suggestion compares with what the user went on to write (the rest of the line), and the gate's curve. */

/** The suggestion's first line with code on it (a block suggestion may start with a newline). */
export function firstLine(suggestion: string): string {
  return (suggestion.split('\n').find((l) => l.trim() !== '') ?? '').trimEnd();
}

/** The first line is exactly the rest of the line the user wrote. */
export function exactRestOfLine(suggestion: string, expected: string): boolean {
  return firstLine(suggestion) === expected.trimEnd();
}

export interface CurvePoint {
  threshold: number;
  /** Suggestions shown, over all cursor positions. */
  shown: number;
  /** Exact rest of line among the shown ones. */
  precision: number;
}

/** Shown rate and precision when only suggestions with confidence >= t are shown, for each t. */
export function gateCurve(points: { confidence: number | null; exact: boolean }[], total: number, thresholds: number[]): CurvePoint[] {
  return thresholds.map((t) => {
    const shown = points.filter((p) => p.confidence !== null && p.confidence >= t);
    const right = shown.filter((p) => p.exact).length;
    return { threshold: t, shown: total ? shown.length / total : 0, precision: shown.length ? right / shown.length : 0 };
  });
}

export const THRESHOLDS = Array.from({ length: 20 }, (_, i) => Math.round(i * 5) / 100);
