import type { FinishReason } from '../../engine/shared/types';

/** What the post-processing filters know about the place a completion goes. */
export interface FilterContext {
  /** The cursor line up to the cursor. */
  linePrefix: string;
  /** The cursor line after the cursor. */
  lineSuffix: string;
  /** The nearest non-blank line above the cursor line ('' at the top of the window). */
  lineAbove: string;
  /** The next non-empty lines of the document below the cursor line. */
  nextLines: string[];
  /** Indentation of the cursor line (for an empty line: where the cursor sits or the line above's). */
  indent: string;
  /**
   * Closers of the brackets open at the cursor, innermost first, from a wide slice of the document
   * (syntax/checkWindow.ts); absent when unknown (the cursor line's own brackets are then used). A template
   * literal's `${` is '}`' (its `}` returns to the template text).
   */
  openAtCursor?: readonly string[];
  /** How many of `openAtCursor` the document after the cursor closes itself. */
  closedAfterCursor?: number;
  /** Why the generation ended ('length', 'time', 'loop': a limit, so its last line may be unfinished). */
  finishReason?: FinishReason;
}

/** A filter returns the (possibly cut) completion, or null to drop it. Each one is a small pure function. */
export type CompletionFilter = (text: string, ctx: FilterContext) => string | null;

export const indentOf = (line: string): number => /^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length;
