import { LINE_BREAK } from '../lineEndings';
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
  /**
   * Characters the prefix may hold when it keeps an earlier window start (documentContext's `keepStart`);
   * prefixChars when absent. fitBudget sets it within the model's context.
   */
  stickyPrefixChars?: number;
}

/** How far past its budget a prefix may grow to keep its start: 1.5x, so typing down a file moves it several times less often. */
export const STICKY_PREFIX_FACTOR = 1.5;

/** A single line longer than this is cut around the cursor (minified files, 10 MB one-liners). */
const MAX_LINE_CHARS = 4000;

/**
 * Builds the text windows around the cursor. The suffix is cut from the bottom; the prefix keeps as many
 * lines above the cursor as fit (its own budget plus whatever the suffix left unused), with its first line
 * snapped to a multiple of a step of about a quarter of the lines that fit (at most `snapLines`): the start,
 * and with it the whole KV cache, only moves every few lines of cursor movement, and at most a quarter
 * of the budget is given up for that.
 *
 * `keepStart`, the window start of the previous request in this file: when the lines from there to the
 * cursor still fit `stickyPrefixChars`, the window keeps that start. A moved start means running the whole
 * prompt again (seconds on a 0.5B model); with the slack, typing down a file moves it about a quarter as often.
 */
export function documentContext(doc: TextSource, cursor: CursorPosition, b: WindowBudget, keepStart?: number): DocumentContext {
  const line = doc.lineAt(cursor.line);
  const linePrefix = line.slice(Math.max(0, cursor.character - MAX_LINE_CHARS), cursor.character);
  const lineSuffix = line.slice(cursor.character, cursor.character + MAX_LINE_CHARS);

  // Suffix: lines below up to a snapped end, cut from the bottom to fit.
  const snapBelow = Math.max(1, b.snapLines);
  const end = Math.min(doc.lineCount, Math.ceil((cursor.line + 1 + b.suffixLines) / snapBelow) * snapBelow);
  let suffix = '';
  let suffixRoom = b.suffixChars - lineSuffix.length;
  for (let i = cursor.line + 1; i < end && suffixRoom > 0; i++) {
    const l = `\n${clipLine(doc.lineAt(i))}`;
    if (l.length > suffixRoom) break;
    suffix += l;
    suffixRoom -= l.length;
  }

  // Prefix: the lines that fit, walking up from the cursor. The cursor line is left out of the budget:
  // typing on it must never move the window start (fitBudget keeps room for it).
  const budget = b.prefixChars + Math.max(0, suffixRoom);
  const top = Math.max(0, cursor.line - b.prefixLines);
  const above: string[] = [];
  let used = 0;
  for (let i = cursor.line - 1; i >= top; i--) {
    const l = `${clipLine(doc.lineAt(i))}\n`;
    if (used + l.length > budget) break;
    above.push(l);
    used += l.length;
  }
  above.reverse();
  let start = cursor.line - above.length;
  if (start > 0) {
    // Snap up to the next multiple of the step: the start then stays put for `step` lines of movement.
    const step = Math.max(1, Math.min(b.snapLines, Math.floor(above.length / 4)));
    const snapped = Math.min(cursor.line, Math.ceil(start / step) * step);
    above.splice(0, snapped - start);
    start = snapped;
  }
  if (keepStart !== undefined && keepStart >= 0 && keepStart < start && cursor.line - keepStart <= b.prefixLines) {
    // Grow the window up to the previous start, if that fits the slack; otherwise keep the fresh window.
    let chars = above.reduce((n, l) => n + l.length, 0);
    const more: string[] = [];
    for (let i = start - 1; i >= keepStart; i--) {
      const l = `${clipLine(doc.lineAt(i))}\n`;
      chars += l.length;
      if (chars > (b.stickyPrefixChars ?? b.prefixChars)) break;
      more.push(l);
    }
    if (more.length === start - keepStart) {
      above.unshift(...more.reverse());
      start = keepStart;
    }
  }
  const prefix = above.join('');

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
  let lineAbove = '';
  for (let i = above.length - 1; i >= 0 && lineAbove === ''; i--) if (above[i].trim() !== '') lineAbove = above[i].slice(0, -1);
  return { prefix, linePrefix, lineSuffix, suffix, nextLines, indent, prefixStartLine: start, lineAbove };
}

export function leadingWhitespace(s: string): string {
  return /^[ \t]*/.exec(s)![0];
}

function clipLine(l: string): string {
  return l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l;
}

/** A TextSource over a string (CLI, tests). Splits once, on every line break VS Code knows (a lone "\r" too). */
export function textSource(text: string, cut?: TextSource['cut']): TextSource {
  const lines = text.split(LINE_BREAK);
  return { lineCount: lines.length, lineAt: (i) => lines[i] ?? '', cut };
}

/** The cursor position at a character offset of a string. */
export function positionAt(text: string, offset: number): CursorPosition {
  // An offset between the "\r" and "\n" of one CRLF is the end of that line, not the start of a new one.
  const inCrlf = offset > 0 && text[offset - 1] === '\r' && text[offset] === '\n';
  const before = text.slice(0, inCrlf ? offset - 1 : offset).split(LINE_BREAK);
  return { line: before.length - 1, character: before[before.length - 1].length };
}
