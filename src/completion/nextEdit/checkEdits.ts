/**
 * The last gate before a next-edit suggestion is shown: each check that fails names itself, so that a session can
 * count why suggestions were dropped (a model that mostly fails `tooLarge` is answering for the wrong window; one
 * that fails `undoesLastEdit` is fighting the user). Checks run cheapest first:
 *
 * - outsideWindow: an edit reaches a line the model was not shown. The model rewrites its window only.
 * - doesNotApply: the document no longer holds the window where it was (the user typed on), or the edits overlap,
 *   run backwards, or point past a line's end.
 * - noChange: applied, the edits leave the window as it is.
 * - tooLarge: more than half the window's lines removed or replaced (2 always allowed). A small model answering
 *   for some other text rewrites everything; a real next edit changes a few lines or adds a block. Added lines do
 *   not count: a new block longer than the window is a real next edit, and the token limit bounds a runaway.
 * - undoesLastEdit: an edit touching the user's latest edit puts back what it replaced, so accepting would undo it.
 * - parsesWorse: the caller's `parsesNoWorse(before, after)` hook (tree-sitter lives elsewhere) says the document
 *   parses worse after the edits.
 *
 * No `vscode` import.
 */

import type { EditableWindow, RecentEdit } from './editableWindow';
import { diffLines, type WindowEdit } from './parseAnswer';

export const EDIT_REJECTIONS = ['outsideWindow', 'doesNotApply', 'noChange', 'tooLarge', 'undoesLastEdit', 'parsesWorse'] as const;
export type EditRejection = (typeof EDIT_REJECTIONS)[number];

export interface EditCheckInput {
  /** The document as it is now. */
  documentText: string;
  /** The window the prompt was built from. */
  window: EditableWindow;
  edits: readonly WindowEdit[];
  /** The user's latest edit in this document, in offsets of `documentText` (EditHistory.latestEdit). */
  lastEdit?: RecentEdit;
  parsesNoWorse?: (before: string, after: string) => boolean;
}

export type EditCheckResult = { ok: true; edits: WindowEdit[] } | { ok: false; reason: EditRejection };

/** The `tooLarge` rule on two LF window texts. */
export function isTooLarge(windowText: string, newWindowText: string): boolean {
  const lines = windowText.split('\n');
  const removed = diffLines(lines, newWindowText.split('\n')).filter((op) => op === 'delete').length;
  return removed > Math.max(2, Math.floor(lines.length / 2));
}

interface Span {
  from: number;
  to: number;
  text: string;
}

/** Whether `span`, applied, restores the text the user's latest edit replaced, around that edit. */
function undoes(documentText: string, span: Span, last: RecentEdit): boolean {
  const start = last.offset;
  const end = start + last.insertedText.length;
  if (span.to < start || span.from > end) return false;
  const from = Math.min(span.from, start);
  const to = Math.max(span.to, end);
  const suggested = documentText.slice(from, span.from) + span.text + documentText.slice(span.to, to);
  return suggested === documentText.slice(from, start) + last.removedText + documentText.slice(end, to);
}

export function checkEdits(input: EditCheckInput): EditCheckResult {
  const { documentText, window, edits, lastEdit, parsesNoWorse } = input;
  const fail = (reason: EditRejection): EditCheckResult => ({ ok: false, reason });
  const inWindow = (line: number) => line >= window.startLine && line <= window.endLine;
  if (edits.some((e) => !inWindow(e.startLine) || !inWindow(e.endLine))) return fail('outsideWindow');

  const raw = documentText.slice(window.startOffset, window.endOffset);
  const startsLine = window.startOffset === 0 || documentText[window.startOffset - 1] === '\n';
  const endsLine =
    window.endOffset === documentText.length || documentText.startsWith('\n', window.endOffset) || documentText.startsWith('\r\n', window.endOffset);
  if (window.endOffset > documentText.length || !startsLine || !endsLine || raw.replace(/\r\n/g, '\n') !== window.text) return fail('doesNotApply');
  const lines = window.text.split('\n');
  const lineStarts = [window.startOffset];
  for (let at = raw.indexOf('\n'); at >= 0; at = raw.indexOf('\n', at + 1)) lineStarts.push(window.startOffset + at + 1);
  const offsetOf = (line: number, character: number) => {
    const index = line - window.startLine;
    return character >= 0 && character <= lines[index].length ? lineStarts[index] + character : -1;
  };
  const spans: Span[] = [];
  for (const edit of edits) {
    const from = offsetOf(edit.startLine, edit.startCharacter);
    const to = offsetOf(edit.endLine, edit.endCharacter);
    if (from < 0 || to < from || from < (spans.at(-1)?.to ?? 0)) return fail('doesNotApply');
    spans.push({ from, to, text: edit.newText });
  }

  let newRaw = '';
  let copied = window.startOffset;
  for (const span of spans) {
    newRaw += documentText.slice(copied, span.from) + span.text;
    copied = span.to;
  }
  newRaw += documentText.slice(copied, window.endOffset);
  if (newRaw === raw) return fail('noChange');
  if (isTooLarge(window.text, newRaw.replace(/\r\n?/g, '\n'))) return fail('tooLarge');
  if (lastEdit && spans.some((span) => undoes(documentText, span, lastEdit))) return fail('undoesLastEdit');
  if (parsesNoWorse && !parsesNoWorse(documentText, documentText.slice(0, window.startOffset) + newRaw + documentText.slice(window.endOffset))) {
    return fail('parsesWorse');
  }
  return { ok: true, edits: [...edits] };
}
