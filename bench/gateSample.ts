// The record eval:quality writes per cursor position (bench/results/gate-samples.<set>.jsonl) and gen:calibration reads.

/** One evaluated cursor position: what the pipeline produced before the gate, and how it compares. */
export interface GateSample {
  set: string;
  language: string;
  kind: string;
  path: string;
  /** A suggestion survived the filters. */
  suggested: boolean;
  suggestion: string;
  confidence: number | null;
  features: Record<string, number> | null;
  exact: boolean;
  firstWord: boolean;
  similarity: number;
  /** Inserting the suggestion raises the window's tree-sitter error count (null: not parsed). */
  addsParseError: boolean | null;
  ms: number;
}
