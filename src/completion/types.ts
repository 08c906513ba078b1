import type { ContextSource } from './context/repo/snippet';
import type { GenerationStats } from '../engine/shared/types';
import type { WindowBudget } from './context/documentContext';
import type { Calibration } from './gate/calibration';
import type { FeatureName } from './gate/features';
import type { InlineMode, InlinePreset } from './presets';

/** Read-only access to a document's lines, so a 10 MB file is never copied whole per keystroke. */
export interface TextSource {
  readonly lineCount: number;
  lineAt(line: number): string;
  /**
   * Lines of the file were cut off above the first line (which may be a line's tail) or below the last:
   * the text is a slice (an eval set's window). An editor's document is the whole file: both unset.
   */
  readonly cut?: { above: boolean; below: boolean };
}

export interface CursorPosition {
  line: number;
  character: number;
}

/** Everything the pipeline needs to know about one completion request. */
export interface CompletionRequest {
  doc: TextSource;
  cursor: CursorPosition;
  languageId: string;
  /** Workspace-relative path, shown to models that understand file separators. */
  path: string;
  /** Explicit trigger (Alt+\ or the command): the user wants alternatives. */
  explicit: boolean;
  /** The workspace's name, for models with a repository token. */
  repoName?: string;
}

/** A snapshot of text around the cursor. */
export interface DocumentContext {
  /** Lines above the cursor line (each ending in '\n'), from a block-snapped start. */
  prefix: string;
  /** The cursor line up to the cursor. */
  linePrefix: string;
  /** The cursor line after the cursor. */
  lineSuffix: string;
  /** Lines below the cursor line (starting with '\n'), up to a block-snapped end. */
  suffix: string;
  /** The next non-empty lines below the cursor line (for the repeat filter). */
  nextLines: string[];
  /** Indentation of the cursor line (or of the line above, if it is empty). */
  indent: string;
  prefixStartLine: number;
  /** The nearest non-blank line of the prefix window ('' when it has none). */
  lineAbove: string;
}

export interface ContextSettings {
  /** Share of the model's context (after the generated tokens) that extra context may take when the window is full. */
  maxShare: number;
  sources: Record<ContextSource, boolean>;
}

export interface ExtraChunk {
  path: string;
  text: string;
  /** Where the chunk's code came from (repository context); absent for plain extra text. */
  sources?: readonly ContextSource[];
}

export interface CompletionSettings {
  preset: InlinePreset;
  budget: WindowBudget;
  /** Characters of extra context from other files (0: none). */
  extraContextChars: number;
  /** Repository context: which sources are on, and the share of the model's window it may take. */
  context: ContextSettings;
  /** Compute the next suggestion as if the shown one were accepted, while the model is idle. */
  prefetch: boolean;
  /** Alternatives returned on an explicit trigger (beam search n-best). */
  alternatives: number;
  /** Suggestions whose estimated probability of being kept is below this are not shown (explicit triggers bypass it). */
  minConfidence: number;
}

/** What the pipeline needs to know about the loaded model. */
export interface ModelTraits {
  /** The model's context in tokens (the prompt is fitted into it). */
  contextTokens: number;
  /** Characters per token of its tokenizer on code, measured (default: a conservative guess). */
  charsPerToken?: number;
  /** Its confidence calibration (none: every suggestion is shown). */
  calibration?: Calibration;
  /** Where the calibration came from (a file, or 'generic'), for logs and stats. */
  calibrationSource?: string;
}

export type CompletionSource = 'cache' | 'inflight' | 'model' | 'none';

export interface CompletionOutcome {
  /** Post-processed suggestions to insert at the cursor, best first (empty: nothing to show). */
  items: string[];
  /** The model's raw text for the best item (model and in-flight sources). */
  raw: string | null;
  source: CompletionSource;
  mode: InlineMode;
  cancelled: boolean;
  /** Estimated probability that the best item is kept (null: not scored, e.g. no calibration). */
  confidence: number | null;
  /** The gate's inputs behind `confidence` (fresh model results only). */
  features?: Record<FeatureName, number>;
  /** A suggestion existed but the gate held it back (below minConfidence). */
  gated: boolean;
  /** Prompt tokens over the tokens the prompt could have used (context minus room to generate). */
  fill?: number;
  stats?: GenerationStats;
  prompt?: string;
  latencyMs: number;
  /**
   * Set when this is a block's first line, shown while the model writes the rest: true once the whole block
   * is in the cache, where the next request at this place finds it (the editor asks again then); false when
   * the generation was cut off.
   */
  fuller?: Promise<boolean>;
}

/** Post-processed items and the best one's confidence. */
export interface ScoredItems {
  items: string[];
  confidence: number | null;
  /** The gate's inputs for the best item (evaluation, Show Stats). */
  features?: Record<FeatureName, number>;
}
