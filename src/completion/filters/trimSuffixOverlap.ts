import type { CompletionFilter } from './filterContext';

/**
 * Removes the tail of the completion that the text after the cursor already has: the model often writes
 * the closing `);` that follows the cursor. Checked against the rest of the line, then the following lines.
 */
export const trimSuffixOverlap: CompletionFilter = (text, ctx) => {
  const rest = ctx.lineSuffix.trim();
  if (rest && text.trimEnd().endsWith(rest) && repeatsRest(text.trimEnd(), rest)) {
    return text
      .trimEnd()
      .slice(0, text.trimEnd().length - rest.length)
      .trimEnd();
  }
  // A multi-line completion that ends by repeating the next lines of the document, where they are.
  const lines = text.trimEnd().split('\n');
  for (let n = Math.min(ctx.nextLines.length, lines.length - 1); n >= 1; n--) {
    // Indentation included: a body's own `}` sits deeper than the document's next one.
    const tail = lines.slice(lines.length - n).map((l) => l.trimEnd());
    if (tail.every((l, i) => l.trim() !== '' && l === ctx.nextLines[i].trimEnd()))
      return lines
        .slice(0, lines.length - n)
        .join('\n')
        .trimEnd();
  }
  return text;
};

/**
 * Whether a completion that ends like the rest of the line really repeats it. When that rest is only the
 * closers an editor auto-closed (`)`, `"]`, `);`), a completion that is balanced on its own ends with its
 * own closers (`str(exc)` before `)`), not the document's: it repeats them only when it has closers or
 * quotes more than it opened.
 */
function repeatsRest(text: string, rest: string): boolean {
  if (!/^[)\]}"'`;,\s]+$/.test(rest)) return true;
  const closers = rest.replace(/[^)\]}]/g, '').length;
  const quotes = [...new Set(rest.replace(/[^"'`]/g, ''))];
  if (closers === 0 && quotes.length === 0) return true;
  if (closers > 0 && unmatchedClosers(text) >= closers) return true;
  return quotes.some((q) => text.split(q).length % 2 === 0);
}

/** Closers in `text` that close nothing it opened (quotes skipped roughly). */
function unmatchedClosers(text: string): number {
  let depth = 0;
  let unmatched = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      if (depth > 0) depth--;
      else unmatched++;
    }
  }
  return unmatched;
}
