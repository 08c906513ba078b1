import type { CursorPosition, DocumentContext, TextSource } from '../types';
import { openTail } from './bracketScan';
import { grammarFor } from './languages';
import type { SyntaxWindow } from './syntaxRefiner';

/** Characters of whole lines above the cursor line that tree-sitter and the bracket filter see (the model sees fewer). */
export const SYNTAX_PREFIX_CHARS = 12_000;
/** Characters of whole lines below the cursor line that they see. */
export const SYNTAX_SUFFIX_CHARS = 4_000;

export interface CheckWindow {
  /** What tree-sitter parses: wider than the model's window, starting at a top-level line where there is one. */
  window: SyntaxWindow;
  /** The cursor is inside a string or comment: prose, which the syntax check must not judge. */
  prose: boolean;
  /**
   * Closers of the brackets open at the cursor (innermost first), as far as the window shows; undefined in
   * prose. A template literal's `${` has '}`': its `}` goes back into the template text.
   */
  openAtCursor?: string[];
  /** How many of those the text after the cursor (rest of line and lines below) closes itself. */
  closedAfterCursor?: number;
}

/**
 * The window the syntax checks judge a suggestion in. The model's window is sized for its context (about
 * 740 characters of prefix at 512 tokens) and often starts inside a class or function whose header is
 * above it, or inside a docstring: the parser then reads a method as a stray statement and prose as code,
 * and drops right suggestions. Parsing costs little next to the model, so the checks get a wider slice of
 * the document, moved down to its first line at column 0 (outside every block, as far as indentation
 * tells) when it does not start at the top of the file.
 */
export function checkWindow(doc: TextSource, cursor: CursorPosition, ctx: DocumentContext, languageId: string): CheckWindow {
  const above: string[] = [];
  let used = 0;
  let i = cursor.line - 1;
  for (; i >= 0; i--) {
    const l = `${doc.lineAt(i)}\n`;
    if (used + l.length > SYNTAX_PREFIX_CHARS) break;
    above.push(l);
    used += l.length;
  }
  above.reverse();
  // Not the top of the file: start at the first top-level line (no indentation, not a closer or continuation).
  // With none, the window is a fragment of one long block (a class, a comment): the checks abstain. A
  // document whose first line is not top-level is such a fragment too (a slice of a file, a pasted block:
  // a source file starts outside every block), so its top is no top-level line either; nor is the first
  // line of a slice (doc.cut), which may be the tail of a line inside a block or a string; nor, in a
  // document whose lines above the cursor close a bracket they never opened, any line up to that closer's:
  // the document starts inside the block it closes (a slice nobody marked as one).
  let startsInBlock = false;
  const topLevel = (l: string) => /^[^\s)\]}.,]/.test(l);
  const lex = grammarFor(languageId)?.lexical;
  const first = above.find((l) => l.trim() !== '');
  let from = i < 0 && doc.cut?.above === true ? 1 : 0;
  if (i < 0 && lex) from = Math.max(from, lineAfter(above, openTail(above.join(''), lex).lastStrayCloser));
  const fragment = i < 0 && (from > 0 || (first !== undefined && !topLevel(first)));
  if (i >= 0 || fragment) {
    const top = above.findIndex((l, k) => k >= from && topLevel(l));
    if (top > 0) above.splice(0, top);
    startsInBlock = top < 0;
  }
  // A slice's last line may be the head of a line: left out, as its first line is never a top-level one.
  const slicedBelow = doc.cut?.below === true;
  const last = slicedBelow ? doc.lineCount - 1 : doc.lineCount;
  let suffix = '';
  let j = cursor.line + 1;
  for (; j < last; j++) {
    const l = `\n${doc.lineAt(j)}`;
    if (suffix.length + l.length > SYNTAX_SUFFIX_CHARS) break;
    suffix += l;
  }
  const cutBelow = j < doc.lineCount;
  // The model's own window when the document gives less (a window never shrinks below what the model saw),
  // unless that is a fragment's top, moved down from, or a slice's last line, left out.
  const lines = above.join('');
  const prefix = fragment || lines.length >= ctx.prefix.length ? lines : ctx.prefix;
  if (!slicedBelow && suffix.length < ctx.suffix.length) suffix = ctx.suffix;
  const window: SyntaxWindow = { languageId, prefix, linePrefix: ctx.linePrefix, lineSuffix: ctx.lineSuffix, suffix, startsInBlock, cutBelow };
  if (!lex) return { window, prose: false };
  const head = prefix + ctx.linePrefix;
  const tail = openTail(head + ctx.lineSuffix + suffix, lex, head.length);
  // A bracket typed at the cursor that the scanner does not count is inside a string or comment.
  const atCursor = openTail(head, lex);
  const prose = atCursor.inside !== null || openTail(`${head}(`, lex).closers.length === atCursor.closers.length;
  if (prose) return { window, prose };
  return { window, prose, openAtCursor: tail.openAtMark, closedAfterCursor: tail.closedAfterMark };
}

/** Index of the line (of `lines`, each ending in '\n') after the one holding character `at`; 0 when `at` is -1. */
function lineAfter(lines: readonly string[], at: number): number {
  if (at < 0) return 0;
  let end = 0;
  for (let k = 0; k < lines.length; k++) {
    end += lines[k].length;
    if (at < end) return k + 1;
  }
  return lines.length;
}
