/**
 * The lines the next-edit model may rewrite: the cursor's line with up to 10 lines above and 10 below, clipped to
 * the document. The Sweep next-edit models were trained on a fixed 21-line window (Sweep's blog: the model "knows
 * how many lines to output"), and Zed's client sends the same (`WINDOW_LINES_ABOVE`/`BELOW` = 10 in
 * crates/edit_prediction/src/sweep_prompt.rs). The text is LF-only with no trailing newline, as Zed's window is
 * (its test: "zero\none\ntwo\nthree\n" around line 1 gives "zero\none\ntwo"); `eol` keeps the document's ending
 * for the edits that go back into it.
 *
 * Every scan is bounded: a minified 10 MB one-line file costs a few slices, not a walk of the file. A cursor line
 * over `maxLineChars` gives null (the model cannot rewrite it within its output budget); a long line above or
 * below ends the window on that side. No `vscode` import.
 */

export interface EditableWindow {
  /** First and last document line of the window, 0-based, inclusive. */
  startLine: number;
  endLine: number;
  /** [startOffset, endOffset) in the document text: from the start of `startLine` to the end of `endLine`'s content. */
  startOffset: number;
  endOffset: number;
  /** The window's lines joined by "\n", no trailing newline. */
  text: string;
  /** The cursor's offset in `text`. */
  cursorOffsetInWindow: number;
  /** The document's line ending, for text written back. */
  eol: '\n' | '\r\n';
}

export interface WindowLimits {
  linesAbove: number;
  linesBelow: number;
  /** A line longer than this is never part of a window. */
  maxLineChars: number;
  /** The window's text stops growing at this size (it appears three times in a prompt: original, current, answer). */
  maxWindowChars: number;
}

const DEFAULT_WINDOW_LIMITS: WindowLimits = { linesAbove: 10, linesBelow: 10, maxLineChars: 1_000, maxWindowChars: 4_000 };

interface LineSpan {
  start: number;
  /** End of the line's content (before "\r\n" or "\n"). */
  contentEnd: number;
  /** Start of the next line, or -1 for the last line. */
  next: number;
}

/** The line that holds `offset`, or null when it is longer than `maxChars` (found without scanning past that). */
function lineAt(text: string, offset: number, maxChars: number): LineSpan | null {
  const lo = Math.max(0, offset - maxChars - 1);
  const back = text.slice(lo, offset).lastIndexOf('\n');
  if (back < 0 && lo > 0) return null;
  const start = back < 0 ? 0 : lo + back + 1;
  const hi = Math.min(text.length, offset + maxChars + 2);
  const ahead = text.slice(offset, hi).indexOf('\n');
  if (ahead < 0 && hi < text.length) return null;
  const newline = ahead < 0 ? -1 : offset + ahead;
  const contentEnd = newline < 0 ? text.length : newline > start && text[newline - 1] === '\r' ? newline - 1 : newline;
  if (contentEnd - start > maxChars) return null;
  return { start, contentEnd, next: newline < 0 ? -1 : newline + 1 };
}

const crlfToLf = (text: string) => (text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text);

function lineNumberOf(text: string, offset: number): number {
  let line = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The window around `cursorOffset`, or null when the cursor's line is too long to rewrite. */
export function editableWindow(documentText: string, cursorOffset: number, limits: Partial<WindowLimits> = {}): EditableWindow | null {
  const { linesAbove, linesBelow, maxLineChars, maxWindowChars } = { ...DEFAULT_WINDOW_LIMITS, ...limits };
  const cursor = Math.max(0, Math.min(cursorOffset, documentText.length));
  const cursorLine = lineAt(documentText, cursor, Math.min(maxLineChars, maxWindowChars));
  if (!cursorLine) return null;
  let top = cursorLine;
  let bottom = cursorLine;
  let above = 0;
  let below = 0;
  let chars = cursorLine.contentEnd - cursorLine.start;
  let growDown = true;
  let growUp = true;
  // One line down, then one up, like Zed's symmetric expansion: a window cut short by the size cap stays centred.
  while (growDown || growUp) {
    if (growDown) {
      const next = below < linesBelow && bottom.next >= 0 ? lineAt(documentText, bottom.next, maxLineChars) : null;
      if (next && chars + 1 + next.contentEnd - next.start <= maxWindowChars) {
        bottom = next;
        below++;
        chars += 1 + next.contentEnd - next.start;
      } else growDown = false;
    }
    if (growUp) {
      const previous = above < linesAbove && top.start > 0 ? lineAt(documentText, top.start - 1, maxLineChars) : null;
      if (previous && chars + 1 + previous.contentEnd - previous.start <= maxWindowChars) {
        top = previous;
        above++;
        chars += 1 + previous.contentEnd - previous.start;
      } else growUp = false;
    }
  }
  const startLine = lineNumberOf(documentText, top.start);
  const firstBreak = documentText.indexOf('\n');
  return {
    startLine,
    endLine: startLine + above + below,
    startOffset: top.start,
    endOffset: bottom.contentEnd,
    text: crlfToLf(documentText.slice(top.start, bottom.contentEnd)),
    cursorOffsetInWindow: crlfToLf(documentText.slice(top.start, cursor)).length,
    eol: firstBreak > 0 && documentText[firstBreak - 1] === '\r' ? '\r\n' : '\n',
  };
}

/** The user's most recent edit in document offsets of the current text (EditHistory.latestEdit gives it). */
export interface RecentEdit {
  offset: number;
  removedText: string;
  insertedText: string;
}

/**
 * The window's text as it was before the user's most recent edit: the prompt's `original/` section. Zed maps the
 * window's start and end offsets into the text before its latest buffer event (an offset inside the inserted text
 * maps to the same distance into the removed text, clamped); this does the same without rebuilding the old
 * document. Without a recent edit the original is the current window, as in Zed.
 */
export function originalWindowText(documentText: string, window: EditableWindow, recent?: RecentEdit): string {
  if (!recent) return window.text;
  const { offset: s, removedText: removed, insertedText: inserted } = recent;
  const toOld = (at: number) => (at <= s ? at : at < s + inserted.length ? s + Math.min(at - s, removed.length) : at - inserted.length + removed.length);
  const from = toOld(window.startOffset);
  const to = toOld(window.endOffset);
  const parts: string[] = [];
  if (from < s) parts.push(documentText.slice(from, Math.min(to, s)));
  const removedFrom = Math.max(from, s);
  const removedTo = Math.min(to, s + removed.length);
  if (removedFrom < removedTo) parts.push(removed.slice(removedFrom - s, removedTo - s));
  const shift = inserted.length - removed.length;
  const tailFrom = Math.max(from, s + removed.length);
  if (tailFrom < to) parts.push(documentText.slice(tailFrom + shift, to + shift));
  return crlfToLf(parts.join(''));
}

/**
 * Whole lines around [start, end) of `text`: the head of the first line and `lines` lines above it, the rest of
 * the last line and `lines` below, each side at most `maxChars` (whole lines then, unless one line alone is
 * longer). The edit history's blocks carry these so that a block says where its edit was, as a diff's context does.
 */
export function linesAround(text: string, start: number, end: number, lines: number, maxChars: number): { before: string; after: string } {
  const head = text.slice(Math.max(0, start - maxChars), start);
  let found = 0;
  let at = head.length;
  while (found <= lines && at > 0) {
    const newline = head.lastIndexOf('\n', at - 1);
    if (newline < 0) break;
    found++;
    at = newline;
  }
  const before = found > lines || (found > 0 && start > maxChars) ? head.slice(at + 1) : head;
  const tail = text.slice(end, end + maxChars);
  found = 0;
  at = -1;
  while (found <= lines) {
    const newline = tail.indexOf('\n', at + 1);
    if (newline < 0) break;
    found++;
    at = newline;
  }
  let stop = found > lines || (found > 0 && end + maxChars < text.length) ? at : tail.length;
  if (stop > 0 && tail[stop - 1] === '\r') stop--;
  return { before, after: tail.slice(0, stop) };
}
