import type { CompletionFilter } from './filterContext';

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const CLOSE = new Set([')', ']', '}']);

/**
 * Cuts the completion at a closing bracket that closes nothing it opened (llama-coder's bracket stop).
 * A closer of a bracket left open earlier on the cursor line is kept only when the document does not
 * already have that closer right after the cursor or on the next line (an editor's auto-closed pair).
 * Quotes on a line are skipped roughly, so brackets inside string literals do not count.
 */
export const stopAtUnmatchedBracket: CompletionFilter = (text, ctx) => {
  const lineOpen = unmatchedOpeners(ctx.linePrefix);
  const docCloses = (c: string) => ctx.lineSuffix.trimStart().startsWith(c) || (ctx.nextLines[0] ?? '').trimStart().startsWith(c);
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote || ch === '\n') quote = null;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '`') {
      quote = ch;
      continue;
    }
    if (OPEN[ch]) stack.push(OPEN[ch]);
    else if (CLOSE.has(ch)) {
      if (stack.length > 0) {
        if (stack[stack.length - 1] !== ch) return text.slice(0, i).trimEnd();
        stack.pop();
        continue;
      }
      const expected = lineOpen.pop();
      if (expected !== ch || docCloses(ch)) return text.slice(0, i).trimEnd();
    }
  }
  return text;
};

function unmatchedOpeners(line: string): string[] {
  const stack: string[] = [];
  for (const ch of line) {
    if (OPEN[ch]) stack.push(OPEN[ch]);
    else if (CLOSE.has(ch) && stack[stack.length - 1] === ch) stack.pop();
  }
  return stack;
}
