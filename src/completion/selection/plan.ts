import type { CursorPosition, TextSource } from '../types';

/**
 * What a selection asks for, by where it ends (documented in docs/architecture.md, "Generate from Selection"):
 * - `body`: it ends in a signature, a docstring or a comment on a line of its own: write the body (or, after
 *   a comment at the top level, the declaration it describes);
 * - `finish`: it ends inside a block, on a statement: finish the block;
 * - `continue`: nothing is selected: continue the cursor line's statement, then its block.
 * All three insert at the end of the selection's last line and stop where the block holding the insertion
 * ends (rules/stopAtBlockEnd.ts); the intent names the case in the review and in the evaluation.
 */
export type GenerateIntent = 'body' | 'finish' | 'continue';

export interface GeneratePlan {
  intent: GenerateIntent;
  /** Where the result goes: the end of the selection's last non-empty line (the cursor line when none). */
  insertAt: CursorPosition;
}

export interface SelectionRange {
  start: CursorPosition;
  end: CursorPosition;
}

/** A line that opens a body: `def f(x):`, `function f() {`, `=> {`, `class A extends B {`, `fn f() -> u8 {`. */
export const OPENS_BODY = /(?:[:{]|=>|\bthen|\bdo)\s*(?:(?:\/\/|#).*)?$/;
/** The end of a docstring or doc comment, or a comment line. */
const DOC_OR_COMMENT = /(?:"""|'''|\*\/)\s*$|^\s*(?:#|\/\/|\/\*|\*)/;

export function planGeneration(doc: TextSource, sel: SelectionRange): GeneratePlan {
  const empty = sel.start.line === sel.end.line && sel.start.character === sel.end.character;
  if (empty) return { intent: 'continue', insertAt: { line: sel.end.line, character: doc.lineAt(sel.end.line).length } };
  let line = sel.end.line;
  // A selection of whole lines ends at the start of the next one: that line is not part of it.
  if (sel.end.character === 0 && line > sel.start.line) line--;
  while (line > sel.start.line && doc.lineAt(line).trim() === '') line--;
  const text = doc.lineAt(line);
  const ends = line === sel.end.line ? sel.end.character : text.length;
  // Mid-line, with code after the selection: insert there (the rest of the line stays after the result).
  const character = text.slice(ends).trim() === '' ? text.length : ends;
  const last = text.slice(0, character);
  const intent: GenerateIntent = OPENS_BODY.test(last) || DOC_OR_COMMENT.test(last) ? 'body' : 'finish';
  return { intent, insertAt: { line, character } };
}
