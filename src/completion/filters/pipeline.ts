import { cutAtIndentationScope } from './cutAtIndentationScope';
import { dropRepeatOfLineAbove } from './dropRepeatOfLineAbove';
import { dropRepeatOfNextLines } from './dropRepeatOfNextLines';
import { dropTrivial } from './dropTrivial';
import { dropUnfinishedLine } from './dropUnfinishedLine';
import type { CompletionFilter, FilterContext } from './filterContext';
import { normalizeLineEndings } from './normalizeLineEndings';
import { reindentWhitespaceLine } from './reindentWhitespaceLine';
import { repetitionGuard } from './repetitionGuard';
import { stopAtUnmatchedBracket } from './stopAtUnmatchedBracket';
import { trimSuffixOverlap } from './trimSuffixOverlap';

/**
 * A filter that cuts where the text before the cut tells it to (the first closer that closes nothing, the first line
 * out of the cursor's scope): what it cuts from an answer's beginning it cuts from any answer that begins so.
 */
const CUTS_BY_PREFIX = { cutsByPrefix: true } as const;

/** The filters, in the order they run. Each sees the previous one's output; null stops the pipeline. */
export const FILTERS: ReadonlyArray<readonly [string, CompletionFilter, { cutsByPrefix: boolean }?]> = [
  ['normalizeLineEndings', normalizeLineEndings],
  ['dropUnfinishedLine', dropUnfinishedLine],
  ['reindentWhitespaceLine', reindentWhitespaceLine],
  ['repetitionGuard', repetitionGuard],
  // Brackets the rest of an answer opens and leaves open may let one more closer through (`} else {`); an answer
  // that opens a bracket on a later line and never closes it is unfinished code, which is not waited for.
  ['stopAtUnmatchedBracket', stopAtUnmatchedBracket, CUTS_BY_PREFIX],
  ['cutAtIndentationScope', cutAtIndentationScope, CUTS_BY_PREFIX],
  ['dropRepeatOfNextLines', dropRepeatOfNextLines],
  ['dropRepeatOfLineAbove', dropRepeatOfLineAbove],
  ['trimSuffixOverlap', trimSuffixOverlap],
  ['dropTrivial', dropTrivial],
];

export function postProcess(raw: string, ctx: FilterContext): string | null {
  let text: string | null = raw;
  for (const [, filter] of FILTERS) {
    text = filter(text, ctx);
    if (text === null) return null;
  }
  return text;
}

/**
 * Whether every answer that begins with `firstLine` (a whole first line, as the model wrote it) and goes on to
 * other lines is dropped: a filter that cuts by prefix leaves nothing of the line. Then the rest of the answer
 * need not be written (CompletionService.runModel stops it). A line dropped for any other reason (a repeat, a
 * trivial line) says nothing of the answer it begins.
 */
export function dropsEveryAnswerFrom(firstLine: string, ctx: FilterContext): boolean {
  let text = firstLine;
  for (const [, filter, traits] of FILTERS) {
    const out = filter(text, ctx);
    if (out === null) return false;
    if (traits?.cutsByPrefix && out.trim() === '' && text.trim() !== '') return true;
    text = out;
  }
  return false;
}
