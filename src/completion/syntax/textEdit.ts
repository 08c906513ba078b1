import type { Edit, Point } from '@vscode/tree-sitter-wasm';

/** Row and column (UTF-16 code units, as web-tree-sitter counts for a string) of an offset in a text. */
export function pointAt(text: string, index: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); nl >= 0 && nl < index; nl = text.indexOf('\n', nl + 1)) {
    row++;
    lineStart = nl + 1;
  }
  return { row, column: index - lineStart };
}

/**
 * One edit that turns `oldText` into `newText` (their common head and tail kept), for an incremental parse
 * from the old tree: a suggestion inserted into the window, or the window moved on by a keystroke. Null
 * when the texts are equal.
 */
export function editBetween(oldText: string, newText: string): Edit | null {
  if (oldText === newText) return null;
  const max = Math.min(oldText.length, newText.length);
  let head = 0;
  while (head < max && oldText.charCodeAt(head) === newText.charCodeAt(head)) head++;
  let tail = 0;
  while (tail < max - head && oldText.charCodeAt(oldText.length - 1 - tail) === newText.charCodeAt(newText.length - 1 - tail)) tail++;
  const oldEnd = oldText.length - tail;
  const newEnd = newText.length - tail;
  const start = pointAt(oldText, head);
  return {
    startIndex: head,
    oldEndIndex: oldEnd,
    newEndIndex: newEnd,
    startPosition: start,
    oldEndPosition: pointAt(oldText, oldEnd),
    newEndPosition: pointAt(newText, newEnd),
  };
}
