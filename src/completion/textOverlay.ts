import type { CursorPosition, TextSource } from './types';

/**
 * The document as it would be with `text` inserted at the cursor, without copying it: used to prefetch
 * the completion that follows a suggestion, as if the user had accepted it.
 */
export function insertAt(doc: TextSource, cursor: CursorPosition, text: string): { doc: TextSource; cursor: CursorPosition } {
  const line = doc.lineAt(cursor.line);
  const inserted = (line.slice(0, cursor.character) + text + line.slice(cursor.character)).split('\n');
  const added = inserted.length - 1;
  const last = inserted[inserted.length - 1];
  const afterLen = line.length - cursor.character;
  return {
    doc: {
      lineCount: doc.lineCount + added,
      lineAt: (i) => {
        if (i < cursor.line) return doc.lineAt(i);
        if (i <= cursor.line + added) return inserted[i - cursor.line];
        return doc.lineAt(i - added);
      },
    },
    cursor: { line: cursor.line + added, character: last.length - afterLen },
  };
}
