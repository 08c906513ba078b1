import type { CompletionFilter } from './filterContext';

/**
 * Drops a completion that repeats the code right below the cursor (users' most common complaint), and cuts
 * a multi-line one at the first line equal to the next line of the document, indentation included: a body
 * written after a block opener has its own `}` or `else:` deeper than the document's next one, and a copy of
 * the code below sits where that code is.
 */
export const dropRepeatOfNextLines: CompletionFilter = (text, ctx) => {
  const next = ctx.nextLines.map((l) => l.trim());
  if (next.length === 0) return text;
  const lines = text.split('\n');
  const first = (ctx.linePrefix + lines[0]).trim();
  if (first !== '' && first === next[0] && ctx.linePrefix.trim() === '') return null;
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() !== '' && lines[i].trimEnd() === ctx.nextLines[0].trimEnd()) {
      const kept = lines.slice(0, i).join('\n').trimEnd();
      return kept.trim() === '' ? null : kept;
    }
  }
  return text;
};
