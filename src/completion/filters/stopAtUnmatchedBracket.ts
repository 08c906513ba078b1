import type { CompletionFilter } from './filterContext';

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const CLOSE = new Set([')', ']', '}']);
/** How `openAtCursor` writes a template literal's `${` (syntax/bracketScan.ts). */
const TEMPLATE_EXPR = '}`';

/**
 * Cuts the completion at a closing bracket that closes nothing it opened (llama-coder's bracket stop),
 * unless it closes a bracket the document leaves open: `openAtCursor` (the brackets open at the cursor, from
 * lines above too: a `) -> None:` that ends a signature, a `});` or `} else {` on a fresh line) less the
 * ones the text after the cursor closes itself (`closedAfterCursor`: an auto-closed `)`, the `}` below).
 * Whatever the completion opens and leaves open is closed by the document too, so `} else {` may close one
 * more. Without that knowledge, only brackets opened earlier on the cursor line count, and a closer the
 * rest of the line already has cuts. Quotes on a line are skipped roughly, so brackets inside string
 * literals do not count, nor do those of a template literal's text after the `}` that closes the `${` the
 * cursor is in (`${err.path})\`;`).
 */
export const stopAtUnmatchedBracket: CompletionFilter = (raw, ctx) => {
  const known = ctx.openAtCursor !== undefined && ctx.closedAfterCursor !== undefined;
  const open = known ? [...ctx.openAtCursor!] : unmatchedOpeners(ctx.linePrefix).reverse();
  const stack: string[] = [];
  const closes: number[] = [];
  let quote: string | null = null;
  // Cut at a closer that closes nothing; the document's closers before it are then counted as for any text, so
  // a text is cut where any longer text that begins with it would be (CompletionService stops on that).
  let text = raw;
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
        if (stack[stack.length - 1] !== ch) {
          text = text.slice(0, i).trimEnd();
          break;
        }
        stack.pop();
        continue;
      }
      const closer = open[closes.length];
      if (closer?.[0] !== ch) {
        text = text.slice(0, i).trimEnd();
        break;
      }
      closes.push(i);
      // The `}` of a template literal's `${`: what follows is the template's text, up to its backquote.
      if (closer === TEMPLATE_EXPR) quote = '`';
    }
  }
  if (closes.length === 0) return text;
  // Brackets the document still needs closed after the completion, against the closers it has for them.
  const allowed = known ? open.length - ctx.closedAfterCursor! + stack.length : lineAllows(ctx.lineSuffix, ctx.nextLines[0] ?? '', open);
  if (closes.length <= allowed) return text;
  return text.slice(0, closes[Math.max(0, allowed)]).trimEnd();
};

/** Without the document's brackets: the cursor line's own, up to one the rest of the line or the next line starts with (an auto-closed pair). */
function lineAllows(lineSuffix: string, nextLine: string, open: string[]): number {
  const rest = lineSuffix.trimStart();
  const next = nextLine.trimStart();
  let n = 0;
  while (n < open.length && !rest.startsWith(open[n]) && !next.startsWith(open[n])) n++;
  return n;
}

function unmatchedOpeners(line: string): string[] {
  const stack: string[] = [];
  for (const ch of line) {
    if (OPEN[ch]) stack.push(OPEN[ch]);
    else if (CLOSE.has(ch) && stack[stack.length - 1] === ch) stack.pop();
  }
  return stack;
}
