// The frozen next-edit set, bench/nextEdit/cases.jsonl (mined by tools/nextEdit/mineNextEdits.js; sources and the
// mining rule in bench/nextEdit/SOURCES.md): pairs of related edits a few lines apart, from real commits. The file
// stores `before` whole and the true next edit as an edit of it (`next`); `after` and the change's
// `documentTextAfter` (= `before`) are rebuilt here, so the file holds each text once.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DocumentChange } from '../../src/completion/nextEdit/editHistory';
import { packageRoot } from '../../src/engine/host/defaultModel';

/** The set's file, relative to the repository root. */
export const NEXT_EDIT_CASES = path.join('bench', 'nextEdit', 'cases.jsonl');

export type NextEditLanguage = 'python' | 'typescript' | 'javascript';

/** A replacement of [offset, offset + removedLength) of a text. */
export interface TextEdit {
  offset: number;
  removedLength: number;
  removedText: string;
  insertedText: string;
}

/** One line of cases.jsonl. */
export interface StoredNextEditCase {
  /** `owner/name@commit12:path`. */
  id: string;
  repo: string;
  licence: string;
  commit: string;
  parent: string;
  path: string;
  language: NextEditLanguage;
  /** Tokens that A introduced and B adds, or that A removed and B removes (why the pair counts as related). */
  shared: string[];
  /** The file at `parent` with A applied: what the user has after the edit. */
  before: string;
  /** A, the user's edit, in offsets of the parent's text (its `documentTextAfter` is `before`, not stored). */
  change: Omit<DocumentChange, 'documentTextAfter'> & { removedText: string };
  /** The end of A's inserted text in `before`. */
  cursorOffset: number;
  /** B, the true next edit, in offsets of `before`. */
  next: TextEdit;
}

export interface NextEditCase extends Omit<StoredNextEditCase, 'change'> {
  change: DocumentChange;
  /** `before` with B applied: the file the commit's author reached. */
  after: string;
}

export function applyTextEdit(text: string, edit: TextEdit): string {
  if (text.slice(edit.offset, edit.offset + edit.removedLength) !== edit.removedText) throw new Error(`edit at ${edit.offset} does not apply`);
  return text.slice(0, edit.offset) + edit.insertedText + text.slice(edit.offset + edit.removedLength);
}

export function expandCase(stored: StoredNextEditCase): NextEditCase {
  return { ...stored, change: { ...stored.change, documentTextAfter: stored.before }, after: applyTextEdit(stored.before, stored.next) };
}

/** The set's cases, in file order; by default the set in this repository. */
export function readNextEditCases(file: string = path.join(packageRoot(__dirname), NEXT_EDIT_CASES), limit = Infinity): NextEditCase[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, limit)
    .map((line) => expandCase(JSON.parse(line) as StoredNextEditCase));
}
