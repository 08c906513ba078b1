/**
 * Which next edits can be shown as ghost text with the stable API: an inline suggestion inserts text at the
 * cursor, so only a single edit that inserts on the cursor line, right at the cursor, qualifies. Every other edit
 * (a replacement, a deletion, an insertion elsewhere) is shown as a decoration. No `vscode` import.
 */
import type { WindowEdit } from './parseAnswer';

export function ghostTextAt(edits: readonly WindowEdit[], line: number, character: number): string | null {
  if (edits.length !== 1) return null;
  const e = edits[0];
  const atCursor = e.startLine === line && e.endLine === line && e.startCharacter === character && e.endCharacter === character;
  return atCursor && e.newText !== '' ? e.newText : null;
}
