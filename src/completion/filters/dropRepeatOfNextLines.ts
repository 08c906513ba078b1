import type { CompletionFilter, FilterContext } from './filterContext';

/**
 * Drops a completion that repeats the code right below the cursor (users' most common complaint), and cuts
 * a multi-line one at the first line equal to the next line of the document, indentation included: a body
 * written after a block opener has its own `}` or `else:` deeper than the document's next one, and a copy of
 * the code below sits where that code is. A first line of closers only (`}`, `});`) that the document needs
 * is no copy: when the brackets open at the cursor outnumber the ones the code below closes (`openAtCursor`,
 * `closedAfterCursor`), the next line's `}` closes an outer block and the cursor's own is still missing; with
 * the document balanced (the next line closes the cursor's block: a model repeating it) it is dropped.
 */
export const dropRepeatOfNextLines: CompletionFilter = (text, ctx) => {
  const next = ctx.nextLines.map((l) => l.trim());
  if (next.length === 0) return text;
  const lines = text.split('\n');
  const first = (ctx.linePrefix + lines[0]).trim();
  if (first !== '' && first === next[0] && ctx.linePrefix.trim() === '' && !closesWhatIsLeftOpen(first, ctx)) return null;
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() !== '' && lines[i].trimEnd() === ctx.nextLines[0].trimEnd()) {
      const kept = lines.slice(0, i).join('\n').trimEnd();
      return kept.trim() === '' ? null : kept;
    }
  }
  return text;
};

/** A line of closing brackets only (`;` and `,` aside) that closes no more than the document leaves open at the cursor. */
function closesWhatIsLeftOpen(line: string, ctx: FilterContext): boolean {
  if (ctx.openAtCursor === undefined || ctx.closedAfterCursor === undefined || !/^[)\]}][)\]};,\s]*$/.test(line)) return false;
  const closers = line.replace(/[^)\]}]/g, '');
  const missing = ctx.openAtCursor.length - ctx.closedAfterCursor;
  return closers.length <= missing && [...closers].every((c, i) => ctx.openAtCursor![i][0] === c);
}
