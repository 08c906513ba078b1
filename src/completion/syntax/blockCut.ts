import type { Node } from '@vscode/tree-sitter-wasm';

/** After the end of a block, what may stay on its last line: closers and separators (`});`), a comment. */
const REST_OF_CLOSING_LINE = /^[\s)\]};,]*(?:(?:\/\/|#|\/\*).*)?$/;

/** Where to cut a suggestion: `keep` characters; `open` characters instead when the document closes the block itself. */
export interface BlockCut {
  keep: number;
  /** The cut before the line with the block's closer, when that line starts with it (`}`, `});`); else null. */
  open: number | null;
}

/**
 * Where a multi-line suggestion ends syntactically, or null to keep it whole.
 * `root` is the tree of the window with `text` inserted at `insStart`. The block is the innermost one (of
 * `blocks`) holding the suggestion's first non-blank character: the block the cursor is in, or the body the
 * cursor line opens (`def f():`, `{`). When it ends inside the suggestion, the suggestion is cut at the end
 * of that line: a closing `}` line is kept with its `);` or comment, and a statement that ends on the
 * block's last line (`} while (x);`) is kept whole. A single-line suggestion is never cut, and neither is
 * the first line of one. When the document already has the closer below the cursor, the closing line the
 * suggestion repeats would be one too many: `open` is the cut that leaves it to the document.
 */
export function blockCut(root: Node, text: string, insStart: number, blocks: ReadonlySet<string>): BlockCut | null {
  const firstLineEnd = text.indexOf('\n');
  if (firstLineEnd < 0) return null;
  const lead = text.search(/\S/);
  if (lead < 0) return null;
  const p = insStart + lead;
  let block: Node | null = null;
  for (let n = root.descendantForIndex(p); n; n = n.parent) {
    if (blocks.has(n.type) && n.startIndex <= p && p < n.endIndex) {
      block = n;
      break;
    }
  }
  if (!block) return null;
  let end = block.endIndex;
  // The statement holding the block (the child of the next block up, or of the root).
  let stmt = block;
  while (stmt.parent?.parent && !blocks.has(stmt.parent.type)) stmt = stmt.parent;
  if (stmt.endPosition.row === block.endPosition.row && stmt.endIndex > end) end = stmt.endIndex;
  const insEnd = insStart + text.length;
  if (end >= insEnd) return null;
  let cut = end - insStart;
  const nl = text.indexOf('\n', cut);
  const lineEnd = nl < 0 ? text.length : nl;
  if (REST_OF_CLOSING_LINE.test(text.slice(cut, lineEnd))) cut = lineEnd;
  cut = Math.max(cut, firstLineEnd);
  if (cut >= text.trimEnd().length) return null;
  // The block's closer at the start of a line of its own (after the first): the cut without that line.
  const closerAt = block.endIndex - 1 - insStart;
  const closerLine = text.lastIndexOf('\n', closerAt) + 1;
  const closes = closerLine > 0 && /^[)\]}]$/.test(text[closerAt] ?? '') && text.slice(closerLine, closerAt).trim() === '';
  return { keep: cut, open: closes ? closerLine - 1 : null };
}
