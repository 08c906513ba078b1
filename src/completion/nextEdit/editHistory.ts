/**
 * The user's recent edits, the "what did they just do" half of a next-edit prompt (its `{path}.diff` sections
 * and, through `latestEdit`, its `original/` window). A burst of typing arrives as one change per key; the model
 * was trained on edits, not keystrokes, so changes that touch the previous edit in the same document within
 * `coalesceGapMs` merge into it. An undo (a change that exactly reverses the latest edit) removes that edit, and a
 * redo puts it back, so the prompt never shows work the user took back.
 *
 * Bounded: a few documents, a few edits each, a cap on all stored characters; oldest dropped first. The latest text
 * of each tracked document is held (a reference to the string the editor gave) because a change event says only
 * how much it removed; documents that were never edited are never held. No `vscode` import.
 */

import { linesAround, type RecentEdit } from './editableWindow';

/**
 * One content change, shaped like VS Code's (`rangeOffset`, `rangeLength`, `text`) with `document.getText()` after
 * it. `offset` is in the text before the change; `path` is workspace-relative with "/". Without
 * `documentTextAfter` (several changes in one event) the text is derived from the held one; `removedText` is only
 * needed for the first change seen in a document, when it removed something.
 */
export interface DocumentChange {
  path: string;
  offset: number;
  removedLength: number;
  insertedText: string;
  atMs: number;
  documentTextAfter?: string;
  removedText?: string;
}

/** A recent edit as the prompt shows it: a few lines around the change, before and after. */
export interface HistoryBlock {
  path: string;
  original: string;
  updated: string;
}

/** The latest edit of a document, in offsets of its current text. */
export type LatestEdit = RecentEdit & { atMs: number };

/**
 * `maxTotalChars` counts all stored edit text (removed, inserted, context). A change or burst over `maxEditChars`
 * is not kept: a pasted file tells the model nothing in 40 lines. Context is `contextLines` whole lines a side,
 * at most `contextChars`.
 */
const DEFAULT_HISTORY_LIMITS = {
  maxEditsPerDocument: 16,
  maxDocuments: 3,
  maxTotalChars: 20_000,
  maxEditChars: 4_000,
  coalesceGapMs: 1_500,
  contextLines: 3,
  contextChars: 400,
};
export type EditHistoryLimits = typeof DEFAULT_HISTORY_LIMITS;

interface StoredEdit {
  /** Where the edit starts in the document's current text; trusted only while `placed`. */
  start: number;
  removed: string;
  inserted: string;
  before: string;
  after: string;
  atMs: number;
  /** False once a later change overlapped this edit, so its offsets no longer say where it is. */
  placed: boolean;
}

interface TrackedDocument {
  text: string;
  edits: StoredEdit[];
  redo: StoredEdit[];
  /** Whether the previous change in this document went into its latest edit (a burst may continue it). */
  canCoalesce: boolean;
  touchedMs: number;
}

const editChars = (e: StoredEdit) => e.removed.length + e.inserted.length + e.before.length + e.after.length;

/** `lines` kept whole when they fit, else cut to `max` as Zed does: the first half, "...", the last lines. */
export function limitLines(text: string, max: number): string {
  const lines = text.split('\n');
  if (lines.length <= max) return text;
  const head = Math.floor(max / 2);
  return [...lines.slice(0, head), '...', ...lines.slice(lines.length - (max - head - 1))].join('\n');
}

export class EditHistory {
  private readonly limits: EditHistoryLimits;
  private readonly docs = new Map<string, TrackedDocument>();
  private lastPath: string | undefined;

  constructor(limits: Partial<EditHistoryLimits> = {}) {
    this.limits = { ...DEFAULT_HISTORY_LIMITS, ...limits };
  }

  record(change: DocumentChange): void {
    const { path, offset, removedLength, insertedText: inserted, atMs } = change;
    let doc = this.docs.get(path);
    const held = doc?.text;
    let after = change.documentTextAfter;
    let removed: string | undefined;
    const fits = held !== undefined && offset >= 0 && offset + removedLength <= held.length;
    if (fits && (after === undefined || after.length === held.length - removedLength + inserted.length)) {
      removed = held.slice(offset, offset + removedLength);
      after ??= held.slice(0, offset) + inserted + held.slice(offset + removedLength);
    } else if (after === undefined) {
      return; // neither text known: nothing to anchor the change to
    }
    if (!after.startsWith(inserted, offset)) return; // an event that does not describe this text
    if (removed === undefined) {
      // First change seen here, or the held text went stale (a missed event): old offsets say nothing any more.
      if (doc) this.docs.delete(path);
      doc = undefined;
      removed = change.removedText ?? (removedLength === 0 ? '' : undefined);
    }
    doc ??= this.track(path, atMs);
    doc.text = after;
    doc.touchedMs = atMs;
    const coalesce = doc.canCoalesce && this.lastPath === path;
    this.lastPath = path;
    if (removed === undefined || removed === inserted) {
      doc.canCoalesce = false;
      return;
    }
    const latest = doc.edits.at(-1)?.placed ? doc.edits.at(-1) : undefined;
    const redo = doc.redo.at(-1);
    const undoes = latest?.start === offset && latest.inserted === removed && latest.removed === inserted;
    const redoes = !undoes && redo?.start === offset && redo.removed === removed && redo.inserted === inserted;
    let next: StoredEdit | undefined;
    doc.canCoalesce = false;
    if (undoes) {
      doc.redo.push(doc.edits.pop()!);
      if (doc.redo.length > this.limits.maxEditsPerDocument) doc.redo.shift();
    } else if (redoes) {
      next = { ...doc.redo.pop()!, atMs, placed: true };
    } else {
      doc.redo.length = 0;
      next = { start: offset, removed, inserted, before: '', after: '', atMs, placed: true };
      const touches = latest && offset <= latest.start + latest.inserted.length && offset + removedLength >= latest.start;
      if (latest && touches && coalesce && atMs - latest.atMs < this.limits.coalesceGapMs) {
        // Both as one edit of the text before the first: its removed text plus what the new change removed beyond
        // it (which the held text still showed unchanged), and the merged span of the new text.
        const from = Math.min(latest.start, offset);
        const to = Math.max(latest.start + latest.inserted.length, offset + removedLength);
        const mergedRemoved = held!.slice(from, latest.start) + latest.removed + held!.slice(latest.start + latest.inserted.length, to);
        const merged = { ...next, start: from, removed: mergedRemoved, inserted: after.slice(from, to - removedLength + inserted.length) };
        if (merged.removed.length + merged.inserted.length <= this.limits.maxEditChars) {
          doc.edits.pop();
          next = merged.removed === merged.inserted ? undefined : merged;
          doc.canCoalesce = true;
        }
      }
      if (next && next.removed.length + next.inserted.length > this.limits.maxEditChars) next = undefined;
      else doc.canCoalesce = true;
    }
    this.shiftEdits(doc.edits, offset, removedLength, inserted.length);
    if (next) this.store(doc, next);
  }

  /** Drops everything about a document: closed, reverted, or deleted. */
  forget(path: string): void {
    this.docs.delete(path);
    if (this.lastPath === path) this.lastPath = undefined;
  }

  /** The latest edit of `path`, when its position in the current text is known. */
  latestEdit(path: string): LatestEdit | undefined {
    const e = this.docs.get(path)?.edits.at(-1);
    return e?.placed ? { offset: e.start, removedText: e.removed, insertedText: e.inserted, atMs: e.atMs } : undefined;
  }

  /** The newest `maxBlocks` edits over all documents, oldest first, each cut to `maxLines` lines, LF only. */
  blocks(maxBlocks = 3, maxLines = 40): HistoryBlock[] {
    const all: { path: string; edit: StoredEdit }[] = [];
    for (const [path, doc] of this.docs) for (const edit of doc.edits) all.push({ path, edit });
    all.sort((a, b) => a.edit.atMs - b.edit.atMs);
    const lf = (text: string) => limitLines(text.replace(/\r\n?/g, '\n'), maxLines);
    return all.slice(Math.max(0, all.length - maxBlocks)).map(({ path, edit: e }) => ({
      path,
      original: lf(e.before + e.removed + e.after),
      updated: lf(e.before + e.inserted + e.after),
    }));
  }

  /** What is held, for tests and stats. */
  size(): { documents: number; edits: number; chars: number } {
    const edits = [...this.docs.values()].flatMap((d) => d.edits);
    return { documents: this.docs.size, edits: edits.length, chars: edits.reduce((sum, e) => sum + editChars(e), 0) };
  }

  private track(path: string, atMs: number): TrackedDocument {
    const leastRecent = [...this.docs].sort((a, b) => a[1].touchedMs - b[1].touchedMs)[0];
    if (leastRecent && this.docs.size >= this.limits.maxDocuments) this.forget(leastRecent[0]);
    const doc: TrackedDocument = { text: '', edits: [], redo: [], canCoalesce: false, touchedMs: atMs };
    this.docs.set(path, doc);
    return doc;
  }

  /** Keeps older edits' offsets true after a change at [offset, offset + removedLength) in the previous text. */
  private shiftEdits(edits: StoredEdit[], offset: number, removedLength: number, insertedLength: number): void {
    for (const e of edits) {
      if (offset + removedLength <= e.start) e.start += insertedLength - removedLength;
      else if (offset < e.start + e.inserted.length) e.placed = false;
    }
  }

  /** Appends `edit` with its context read from the current text, then enforces the bounds, oldest first. */
  private store(doc: TrackedDocument, edit: StoredEdit): void {
    const { contextLines, contextChars } = this.limits;
    const { before, after } = linesAround(doc.text, edit.start, edit.start + edit.inserted.length, contextLines, contextChars);
    doc.edits.push({ ...edit, before, after });
    while (doc.edits.length > this.limits.maxEditsPerDocument) doc.edits.shift();
    for (let total = this.size().chars; total > this.limits.maxTotalChars; total = this.size().chars) {
      let oldest: TrackedDocument | undefined;
      for (const d of this.docs.values()) if (d.edits.length && (!oldest || d.edits[0].atMs < oldest.edits[0].atMs)) oldest = d;
      oldest?.edits.shift();
    }
  }
}
