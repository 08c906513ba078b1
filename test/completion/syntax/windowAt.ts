import assert from 'node:assert/strict';
import type { SyntaxWindow } from '../../../src/completion/syntax/syntaxRefiner';

/** Marks the cursor (or insertion point) in golden documents. */
export const CURSOR = '█';

/** The window of a document with one █: everything around the mark, as the completion service cuts it. */
export function windowAt(languageId: string, doc: string): SyntaxWindow {
  const at = doc.indexOf(CURSOR);
  assert.ok(at >= 0 && doc.indexOf(CURSOR, at + 1) < 0, 'one cursor mark');
  const head = doc.slice(0, at);
  const tail = doc.slice(at + CURSOR.length);
  const lineStart = head.lastIndexOf('\n') + 1;
  const lineEnd = tail.indexOf('\n');
  return {
    languageId,
    prefix: head.slice(0, lineStart),
    linePrefix: head.slice(lineStart),
    lineSuffix: lineEnd < 0 ? tail : tail.slice(0, lineEnd),
    suffix: lineEnd < 0 ? '' : tail.slice(lineEnd),
  };
}
