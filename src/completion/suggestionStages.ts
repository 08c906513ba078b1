import type { FinishReason, Sequence } from '../engine/shared/types';
import type { FilterContext } from './filters/filterContext';
import { postProcess } from './filters/pipeline';
import type { Calibration } from './gate/calibration';
import { gateThreshold } from './gate/gateThreshold';
import { scoreSuggestion } from './gate/scoreSuggestion';
import type { SyntaxRefiner } from './syntax/syntaxRefiner';
import { type CheckWindow, checkWindow } from './syntax/syntaxWindow';
import type { CompletionRequest, DocumentContext, ScoredItems } from './types';

/**
 * What the model wrote becomes a suggestion through these stages, in this order, for a whole answer and for a
 * block's first line alike (CompletionService.runModel); the gate then decides, with the request, whether it
 * is shown. Generate from Selection has its own list (selection/rules/pipeline.ts).
 */

/** What the stages know about the place the suggestion goes. */
export interface SuggestionPlace {
  /** The filters' view of the cursor (line, indentation, brackets). */
  filters: FilterContext;
  /** The syntax check's wider window; `prose` at a cursor inside a string or comment. */
  check: CheckWindow;
  syntax: SyntaxRefiner | null;
  ctx: DocumentContext;
  languageId: string;
}

/** The place of a request: the syntax checks and the bracket filter see a wider slice of the document than the model does. */
export function placeOf(req: Pick<CompletionRequest, 'doc' | 'cursor' | 'languageId'>, ctx: DocumentContext, syntax: SyntaxRefiner | null): SuggestionPlace {
  const check = checkWindow(req.doc, req.cursor, ctx, req.languageId);
  return {
    filters: {
      linePrefix: ctx.linePrefix,
      lineSuffix: ctx.lineSuffix,
      nextLines: ctx.nextLines,
      lineAbove: ctx.lineAbove,
      indent: ctx.indent,
      openAtCursor: check.openAtCursor,
      closedAfterCursor: check.closedAfterCursor,
    },
    check,
    syntax,
    ctx,
    languageId: req.languageId,
  };
}

/** A text stage: the text it passes on, or null to drop the suggestion. */
type TextStage = (text: string, place: SuggestionPlace, finishReason: FinishReason) => string | null;

/** The text stages, in the order they run. Adding one is adding a line. */
const SUGGESTION_STAGES: ReadonlyArray<readonly [string, TextStage]> = [
  // The post-processing filters (filters/pipeline.ts, one small function each).
  ['filters', (text, place, finishReason) => postProcess(text, { ...place.filters, finishReason })],
  // tree-sitter: cut where the code stops parsing, drop what would break it. Prose (a docstring, a comment, a
  // string) is not code: tree-sitter cannot judge it.
  [
    'tree-sitter',
    (text, place) => {
      if (!place.syntax || place.check.prose) return text;
      const refined = place.syntax.refine(text, place.check.window);
      return refined === null || refined.trim() === '' ? null : refined;
    },
  ],
];

/** The model's `text` through every stage; null when one drops it. */
export function suggestionText(text: string, finishReason: FinishReason, place: SuggestionPlace): string | null {
  let out: string | null = text;
  for (const [, stage] of SUGGESTION_STAGES) {
    out = stage(out, place, finishReason);
    if (out === null) return null;
  }
  return out;
}

/**
 * The score stage: the suggestion with its probability of being kept, from the calibration and the sequence's
 * token log-probabilities. A backend that reports none cannot be scored: confidence null, nothing held back.
 */
export function scoredSuggestion(sequence: Sequence, text: string | null, place: SuggestionPlace, calibration: Calibration | undefined): ScoredItems {
  if (text === null) return { items: [], confidence: null };
  if (!calibration || sequence.tokenLogprobs.length === 0) return { items: [text], confidence: null };
  return { items: [text], ...scoreSuggestion(calibration, text, sequence, place.ctx, place.languageId) };
}

/** The gate: shown when the user asked (explicit), when it cannot be scored, or when its confidence clears the bar. */
export function gate(
  s: ScoredItems,
  calibration: Calibration | undefined,
  minConfidence: number,
  explicit: boolean,
): { items: string[]; confidence: number | null; gated: boolean } {
  const shown = explicit || s.confidence === null || s.confidence >= gateThreshold(calibration, minConfidence);
  return { items: shown ? s.items : [], confidence: s.confidence, gated: !shown && s.items.length > 0 };
}
