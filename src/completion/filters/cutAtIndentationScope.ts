import { indentOf, type CompletionFilter } from './filterContext';

const BLOCK_OPENER = /[:{([]\s*$|=>\s*$/;
const CLOSER_LINE = /^\s*[}\])]/;

/**
 * Multi-line completions end where the indentation scope of the cursor ends (llama.cpp's n_indent, Tabby's
 * block limit): at a line indented less than the cursor line, or, when the code on the cursor line opens a
 * block, at a line back at the cursor line's indent. One closing line (`}`, `)`, `]`, `} else {`) at that indent is kept.
 */
export const cutAtIndentationScope: CompletionFilter = (text, ctx) => {
  const lines = text.split('\n');
  if (lines.length === 1) return text;
  const base = indentOf(ctx.linePrefix.trim() === '' ? ctx.indent : ctx.linePrefix);
  // Only a cursor line with code on it opens "its" block; from an empty line the model may write several
  // statements at the cursor's level, and only a dedent below it ends the scope.
  const opensBlock = ctx.linePrefix.trim() !== '' && BLOCK_OPENER.test(ctx.linePrefix + lines[0]);
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    const ind = indentOf(line);
    if (ind < base || (opensBlock && ind === base)) {
      const keepCloser = ind === base && opensBlock && CLOSER_LINE.test(line);
      return lines
        .slice(0, keepCloser ? i + 1 : i)
        .join('\n')
        .trimEnd();
    }
  }
  return text;
};
