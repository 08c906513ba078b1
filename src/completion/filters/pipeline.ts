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

/** The filters, in the order they run. Each sees the previous one's output; null stops the pipeline. */
export const FILTERS: ReadonlyArray<readonly [string, CompletionFilter]> = [
  ['normalizeLineEndings', normalizeLineEndings],
  ['dropUnfinishedLine', dropUnfinishedLine],
  ['reindentWhitespaceLine', reindentWhitespaceLine],
  ['repetitionGuard', repetitionGuard],
  ['stopAtUnmatchedBracket', stopAtUnmatchedBracket],
  ['cutAtIndentationScope', cutAtIndentationScope],
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
