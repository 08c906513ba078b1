/**
 * The edit history as a file, for `ghostline next-edit --history` and evaluations: the user's edits in order, each
 * `{ offset, removedText, insertedText, atMs? }` with `offset` in the text before that edit, the last one giving
 * the file as it is now. The text before the first edit is rebuilt by undoing them from the current text, so an
 * edit that does not match the file is found and named, and the edits are replayed into an EditHistory as the
 * editor would have recorded them. No `vscode` import.
 */
import { EditHistory } from './editHistory';

export interface HistoryFileEdit {
  offset: number;
  removedText: string;
  insertedText: string;
  /** Milliseconds; default: 2 s apart, so each edit is its own block. */
  atMs?: number;
}

/** What went wrong reading a history file: one message, for an exit code 2. */
export class HistoryFileError extends Error {}

const MAX_EDITS = 10_000;

/** The edits of a parsed JSON value (an array, or `{ "edits": [...] }`), checked. */
export function historyEdits(value: unknown): HistoryFileEdit[] {
  const list = Array.isArray(value) ? value : (value as { edits?: unknown } | null)?.edits;
  if (!Array.isArray(list)) throw new HistoryFileError('the history must be a JSON array of edits, or {"edits": [...]}');
  if (list.length > MAX_EDITS) throw new HistoryFileError(`the history has ${list.length} edits; at most ${MAX_EDITS} are read`);
  return list.map((e, i) => {
    const ok =
      e !== null &&
      typeof e === 'object' &&
      Number.isInteger(e.offset) &&
      e.offset >= 0 &&
      typeof e.removedText === 'string' &&
      typeof e.insertedText === 'string' &&
      (e.atMs === undefined || Number.isFinite(e.atMs));
    if (!ok) throw new HistoryFileError(`edit ${i + 1}: needs "offset" (a whole number from 0), "removedText" and "insertedText" (strings)`);
    return e as HistoryFileEdit;
  });
}

/** Replays `edits` of the document `path` whose text is now `current`; throws HistoryFileError on a mismatch. */
export function replayHistory(path: string, current: string, edits: readonly HistoryFileEdit[], history = new EditHistory()): EditHistory {
  const texts: string[] = [current];
  let text = current;
  for (let i = edits.length - 1; i >= 0; i--) {
    const e = edits[i];
    if (text.slice(e.offset, e.offset + e.insertedText.length) !== e.insertedText) {
      throw new HistoryFileError(`edit ${i + 1} does not match the file: its inserted text is not at offset ${e.offset} of the text after it`);
    }
    text = text.slice(0, e.offset) + e.removedText + text.slice(e.offset + e.insertedText.length);
    texts.unshift(text);
  }
  const start = Date.now() - edits.length * 2000;
  edits.forEach((e, i) => {
    history.record({
      path,
      offset: e.offset,
      removedLength: e.removedText.length,
      removedText: e.removedText,
      insertedText: e.insertedText,
      atMs: e.atMs ?? start + i * 2000,
      documentTextAfter: texts[i + 1],
    });
  });
  return history;
}

/** Where the cursor is after the last edit: the end of its inserted text (0 without edits). */
export function cursorAfter(edits: readonly HistoryFileEdit[]): number {
  const last = edits.at(-1);
  return last ? last.offset + last.insertedText.length : 0;
}
