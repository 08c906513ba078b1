/**
 * The model's answer (what it wrote after "<|file_sep|>updated/{path}\n") turned into the new window and then into
 * the smallest edits of the current window: a line diff finds the changed runs of lines, and each run is cut down
 * to the characters that differ, so an inline suggestion shows only what changes. Edits are in document lines and
 * characters (a CRLF document's lines have the same characters as the LF window) and their text takes the
 * document's line ending.
 *
 * The answer ends at a stop string or at the engine's token limit. Ended by a stop string it is the whole new
 * window, except for newlines at its very end: the format puts one before the next "<|file_sep|>" but none before
 * an end-of-text, and a window that ends in an empty line shows no newline of its own (Zed's `write_file_block`
 * adds one only when missing), so the window keeps its own trailing newlines whatever the answer has. Cut off by
 * the limit, its last line may be partial and its end is unknown: the partial line is dropped, and so are changes
 * after its last line that matches the window, since nothing says whether the model was replacing the lines below
 * or inserting above them. The window's tail is kept, never deleted. An answer with no text is a failure, never
 * "delete the window". No `vscode` import.
 */

import type { EditableWindow } from './editableWindow';
import { SWEEP_STOP_STRINGS } from './sweepPrompt';

/** A replacement of [start, end) in document coordinates (0-based lines, UTF-16 characters). */
export interface WindowEdit {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
  newText: string;
}

export interface ParsedAnswer {
  /** The new window, LF only. */
  windowText: string;
  edits: WindowEdit[];
  /** The answer hit the token limit; only its changes up to its last line matching the window are kept. */
  truncated: boolean;
}

export type LineOp = 'equal' | 'delete' | 'insert';

/** A longest-common-subsequence line diff: for each step, whether a line of `a` stays, goes, or one of `b` comes. */
export function diffLines(a: readonly string[], b: readonly string[]): LineOp[] {
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const ops: LineOp[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push('equal');
      i++;
      j++;
    } else if (j >= b.length || (i < a.length && lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
      ops.push('delete');
      i++;
    } else {
      ops.push('insert');
      j++;
    }
  }
  return ops;
}

/** The answer as the new window text, or null when it holds no usable line. */
export function answerWindowText(answer: string, currentWindow: string, endedAtStop = false): { text: string; truncated: boolean } | null {
  const stops = SWEEP_STOP_STRINGS.map((s) => answer.indexOf(s)).filter((at) => at >= 0);
  const complete = endedAtStop || stops.length > 0;
  const raw = stops.length ? answer.slice(0, Math.min(...stops)) : answer;
  const text = raw.replace(/\r\n?/g, '\n');
  const body = text.replace(/\n+$/, '');
  const windowBody = currentWindow.replace(/\n+$/, '');
  if (raw === '' || (body === '' && windowBody !== '')) return null;
  if (complete) return { text: body + currentWindow.slice(windowBody.length), truncated: false };
  const lastBreak = text.lastIndexOf('\n');
  if (lastBreak < 0) return null;
  const answerLines = text.slice(0, lastBreak).split('\n');
  const windowLines = currentWindow.split('\n');
  let oldIndex = 0;
  let newIndex = 0;
  let keptOld = 0;
  let keptNew = 0;
  for (const op of diffLines(windowLines, answerLines)) {
    if (op !== 'insert') oldIndex++;
    if (op !== 'delete') newIndex++;
    if (op === 'equal') [keptOld, keptNew] = [oldIndex, newIndex];
  }
  if (keptNew === 0) return null;
  return { text: [...answerLines.slice(0, keptNew), ...windowLines.slice(keptOld)].join('\n'), truncated: true };
}

/** The smallest edits that turn `window.text` into `newText`, in document coordinates. */
export function windowEdits(window: Pick<EditableWindow, 'startLine' | 'text' | 'eol'>, newText: string): WindowEdit[] {
  const oldLines = window.text.split('\n');
  const newLines = newText.split('\n');
  const edits: WindowEdit[] = [];
  const eol = (text: string) => (window.eol === '\n' ? text : text.replace(/\n/g, window.eol));
  const at = (line: number, character: number) => ({ line: window.startLine + line, character });
  const push = (from: { line: number; character: number }, to: { line: number; character: number }, text: string) =>
    edits.push({ startLine: from.line, startCharacter: from.character, endLine: to.line, endCharacter: to.character, newText: eol(text) });
  const ops = diffLines(oldLines, newLines);
  let i = 0;
  let j = 0;
  for (let k = 0; k < ops.length; ) {
    if (ops[k] === 'equal') {
      [i, j, k] = [i + 1, j + 1, k + 1];
      continue;
    }
    const [a, c] = [i, j];
    for (; k < ops.length && ops[k] !== 'equal'; k++) {
      if (ops[k] === 'delete') i++;
      else j++;
    }
    const [b, d] = [i, j];
    const inserted = newLines.slice(c, d).join('\n');
    if (a === b) {
      // Whole new lines: before old line `a`, or after the last line.
      if (a < oldLines.length) push(at(a, 0), at(a, 0), `${inserted}\n`);
      else push(at(a - 1, oldLines[a - 1].length), at(a - 1, oldLines[a - 1].length), `\n${inserted}`);
    } else if (c === d) {
      // Whole lines gone, with the line break that ends them (or, at the window's end, the one before them).
      if (b < oldLines.length) push(at(a, 0), at(b, 0), '');
      else if (a > 0) push(at(a - 1, oldLines[a - 1].length), at(b - 1, oldLines[b - 1].length), '');
      else push(at(0, 0), at(b - 1, oldLines[b - 1].length), '');
    } else {
      const removed = oldLines.slice(a, b).join('\n');
      let prefix = 0;
      while (prefix < removed.length && prefix < inserted.length && removed[prefix] === inserted[prefix]) prefix++;
      let suffix = 0;
      const room = Math.min(removed.length, inserted.length) - prefix;
      while (suffix < room && removed[removed.length - 1 - suffix] === inserted[inserted.length - 1 - suffix]) suffix++;
      const position = (offset: number) => {
        const lines = removed.slice(0, offset).split('\n');
        return at(a + lines.length - 1, lines[lines.length - 1].length);
      };
      push(position(prefix), position(removed.length - suffix), inserted.slice(prefix, inserted.length - suffix));
    }
  }
  return edits;
}

/** The answer parsed against the window it was asked for, or null when it holds nothing usable. */
export function parseAnswer(answer: string, window: Pick<EditableWindow, 'startLine' | 'text' | 'eol'>, endedAtStop = false): ParsedAnswer | null {
  const parsed = answerWindowText(answer, window.text, endedAtStop);
  return parsed && { windowText: parsed.text, edits: windowEdits(window, parsed.text), truncated: parsed.truncated };
}
