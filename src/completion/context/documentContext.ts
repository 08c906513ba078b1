import type { CursorPosition, DocumentContext, TextSource } from '../types';

export interface WindowBudget {
  /** Lines above the cursor considered at most. */
  prefixLines: number;
  /** Lines below the cursor considered at most. */
  suffixLines: number;
  /** Characters of the lines above the cursor kept at most (the cursor line is not counted). */
  prefixChars: number;
  /** Characters of suffix (rest of line + lines below) kept at most. */
  suffixChars: number;
  /** Window edges snap to multiples of this many lines, so moving the cursor a little keeps the prompt stable. */
  snapLines: number;
}

/** A single line longer than this is cut around the cursor (minified files, 10 MB one-liners). */
export const MAX_LINE_CHARS = 4000;

/**
 * Builds the text windows around the cursor. Whole lines are dropped from the far ends when over budget,
 * in blocks of `snapLines`, so the first line of the prefix only changes every few lines of movement.
 */
export function documentContext(doc: TextSource, cursor: CursorPosition, b: WindowBudget): DocumentContext {
  const line = doc.lineAt(cursor.line);
  const linePrefix = line.slice(Math.max(0, cursor.character - MAX_LINE_CHARS), cursor.character);
  const lineSuffix = line.slice(cursor.character, cursor.character + MAX_LINE_CHARS);
  const snap = Math.max(1, b.snapLines);

  // Prefix: snapped start, then drop blocks from the top until it fits.
  let start = Math.max(0, Math.floor((cursor.line - b.prefixLines) / snap) * snap);
  const above: string[] = [];
  for (let i = start; i < cursor.line; i++) above.push(`${clipLine(doc.lineAt(i))}\n`);
  // The cursor line is left out of the budget: typing on it must never move the window start (that would
  // invalidate the whole KV cache at one keystroke); fitBudget keeps room for it.
  let prefixLen = above.reduce((s, l) => s + l.length, 0);
  let dropped = 0;
  while (prefixLen > b.prefixChars && dropped < above.length) {
    // Whole blocks keep the start snapped; the last block goes line by line so something is kept.
    const n = above.length - dropped > snap ? snap : 1;
    for (let i = 0; i < n; i++) prefixLen -= above[dropped + i].length;
    dropped += n;
  }
  start += dropped;
  const prefix = above.slice(dropped).join('');

  // Suffix: lines below up to a snapped end, cut from the bottom to fit.
  const end = Math.min(doc.lineCount, Math.ceil((cursor.line + 1 + b.suffixLines) / snap) * snap);
  let suffix = '';
  let budget = b.suffixChars - lineSuffix.length;
  for (let i = cursor.line + 1; i < end && budget > 0; i++) {
    const l = `\n${clipLine(doc.lineAt(i))}`;
    if (l.length > budget) break;
    suffix += l;
    budget -= l.length;
  }

  const nextLines: string[] = [];
  for (let i = cursor.line + 1; i < doc.lineCount && nextLines.length < 3 && i <= cursor.line + 20; i++) {
    const l = doc.lineAt(i);
    if (l.trim() !== '') nextLines.push(clipLine(l));
  }

  let indent = leadingWhitespace(line);
  if (line.trim() === '' && cursor.line > 0) {
    // An empty line takes the indentation the cursor sits at, or the line above's.
    indent = linePrefix.length > 0 ? linePrefix : leadingWhitespace(doc.lineAt(cursor.line - 1));
  }
  return { prefix, linePrefix, lineSuffix, suffix, nextLines, indent, prefixStartLine: start };
}

export function leadingWhitespace(s: string): string {
  return /^[ \t]*/.exec(s)![0];
}

function clipLine(l: string): string {
  return l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l;
}

/** A TextSource over a string (CLI, tests). Splits once. */
export function textSource(text: string): TextSource {
  const lines = text.split(/\r?\n/);
  return { lineCount: lines.length, lineAt: (i) => lines[i] ?? '' };
}

/** The cursor position at a character offset of a string. */
export function positionAt(text: string, offset: number): CursorPosition {
  const before = text.slice(0, offset).split(/\r?\n/);
  return { line: before.length - 1, character: before[before.length - 1].length };
}
