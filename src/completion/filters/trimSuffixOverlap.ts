import type { CompletionFilter } from './filterContext';

/**
 * Removes the tail of the completion that the text after the cursor already has: the model often writes
 * the closing `);` that follows the cursor. Checked against the rest of the line, then the following lines.
 */
export const trimSuffixOverlap: CompletionFilter = (text, ctx) => {
  const rest = ctx.lineSuffix.trim();
  if (rest && text.trimEnd().endsWith(rest)) {
    return text
      .trimEnd()
      .slice(0, text.trimEnd().length - rest.length)
      .trimEnd();
  }
  // A multi-line completion that ends by repeating the next lines of the document.
  const lines = text.trimEnd().split('\n');
  for (let n = Math.min(ctx.nextLines.length, lines.length - 1); n >= 1; n--) {
    const tail = lines.slice(lines.length - n).map((l) => l.trim());
    if (tail.every((l, i) => l !== '' && l === ctx.nextLines[i].trim()))
      return lines
        .slice(0, lines.length - n)
        .join('\n')
        .trimEnd();
  }
  return text;
};
