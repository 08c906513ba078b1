import type { Node } from '@vscode/tree-sitter-wasm';

/** A parse error: an ERROR node (nested ones too) or a MISSING token, as a range of string offsets. */
export interface ParseError {
  start: number;
  end: number;
  missing: boolean;
}

/** Every ERROR node (nested ones included) and MISSING token of a tree, descending only into subtrees that have one. */
export function collectErrors(root: Node): ParseError[] {
  const out: ParseError[] = [];
  if (!root.hasError) return out;
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.isMissing) {
      out.push({ start: node.startIndex, end: node.endIndex, missing: true });
      continue;
    }
    if (node.isError) out.push({ start: node.startIndex, end: node.endIndex, missing: false });
    for (const child of node.children) if (child?.hasError) stack.push(child);
  }
  return out;
}

/** Where a suggestion went in: `[start, start + length)` of the text after insertion. */
export interface Insertion {
  start: number;
  length: number;
}

/** A parsed text: the window (or the window with a suggestion) and the closers appended to it (bracketScan.ts). */
export interface ParsedText {
  errors: readonly ParseError[];
  /** The text parsed: `body`, then the closers. */
  text: string;
  /** Where the closers start. */
  bodyLength: number;
}

/**
 * The errors of the text after insertion that the suggestion brought in. The window before insertion is a
 * slice of a file and may already have errors (an unfinished line at the cursor, a cut at either edge), so an
 * error counts as new when
 * - it is an ERROR node that lies wholly inside the inserted text (the suggestion has tokens that fit
 *   nowhere: a stray `)`, a leading `.`), whatever the window had; or
 * - mapped back to the window before insertion (the inserted text shrinks to the cursor), it touches no
 *   line that had an error there (what the suggestion broke elsewhere: an unterminated string, a closer
 *   that ends a block early). The appended closers count as one line: the suggestion may close a block
 *   that the window left to them, so there are fewer of them after insertion.
 * An error the window had, moved or reshaped by recovery, touches its old lines and is not counted.
 */
export function newErrors(before: ParsedText, after: ParsedText, ins: Insertion): ParseError[] {
  const insEnd = ins.start + ins.length;
  const text = before.text;
  const tail = before.bodyLength;
  const back = (p: number) => (p >= after.bodyLength ? tail : p <= ins.start ? p : p >= insEnd ? p - ins.length : ins.start);
  const lines = before.errors.map((e) => ({
    start: e.start >= tail ? tail : e.start > 0 ? text.lastIndexOf('\n', e.start - 1) + 1 : 0,
    end: e.end >= tail ? text.length : lineEnd(text, e.end),
  }));
  return after.errors.filter((e) => {
    if (!e.missing && e.end > e.start && e.start >= ins.start && e.end <= insEnd) return true;
    const s = back(e.start);
    const t = back(e.end);
    return !lines.some((l) => s <= l.end && l.start <= t);
  });
}

function lineEnd(text: string, from: number): number {
  const nl = text.indexOf('\n', from);
  return nl < 0 ? text.length : nl;
}

/** Non-blank lines above the cursor line looked at, and how many of them starting an error make them unreadable. */
const READ_LINES = 8;
const UNREADABLE_LINES = 5;

/**
 * Whether the parser could not read the code just above the cursor line: errors start on most of its last
 * non-blank lines. A window that starts inside a string or comment reads so (a module docstring's prose at
 * column 0, taken for top-level code), and so does a file in the middle of a large edit; a suggestion is
 * not judged against code the parser cannot read. A typo or an unfinished line is one error, not five.
 */
export function unreadableAbove(before: ParsedText, cursor: number): boolean {
  const text = before.text;
  const starts = before.errors.filter((e) => !e.missing && e.start < cursor).map((e) => e.start);
  if (starts.length < UNREADABLE_LINES) return false;
  let end = text.lastIndexOf('\n', cursor - 1);
  let seen = 0;
  let broken = 0;
  while (end > 0 && seen < READ_LINES) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    if (text.slice(start, end).trim() !== '') {
      seen++;
      if (starts.some((s) => s >= start && s < end)) broken++;
    }
    end = start - 1;
  }
  return broken >= UNREADABLE_LINES;
}
