import { indentOf } from '../../filters/filterContext';
import type { GenerateRule } from './ruleContext';

/** A block shorter than this (non-space characters) is not compared: `}` or `pass` repeat legitimately. */
const MIN_BLOCK_CHARS = 12;

/**
 * Small models loop by blocks, not only by lines: the default model wrote the same
 * `export function increment(value) { ... }` block after block until the token limit. Cuts the result
 * before the first block that is equal to the block right before it, to an earlier block of the result of
 * at least two lines, or to a block of at least three lines in the document above the insertion (a function
 * copied from above is the same loop; two-line ones such as `if not x:` / `return None` recur in real code). A block is a line at the indentation of the result's first code line (or shallower) with the deeper lines (and closing lines
 * such as `}` or `});`) after it; blocks are equal when their lines are, ignoring indentation and blank
 * lines. The lines before the first block (the rest of a body, the insertion line) are never cut.
 */
export const cutRepeatedBlock: GenerateRule = (text, ctx) => {
  const lines = text.split('\n');
  // The level of the result's first code line (the body): a shallower line starts a block too, so a loop
  // inside the body is found even when the result goes on past it at column 0.
  const first = lines.slice(1).find((l) => l.trim() !== '');
  if (first === undefined) return text;
  const base = indentOf(first);
  const blocks = splitBlocks(lines, base, 1);
  const above = rootedBlocks(ctx.above.split('\n'));
  const seen = new Set<string>();
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (b.chars < MIN_BLOCK_CHARS) continue;
    const repeated = (i > 0 && blocks[i - 1].key === b.key) || (b.lines >= 2 && (seen.has(b.key) || (b.lines >= 3 && above.has(b.key))));
    if (repeated) return lines.slice(0, b.start).join('\n').trimEnd();
    if (b.lines >= 2) seen.add(b.key);
  }
  return text;
};

interface Block {
  /** Index of its first line. */
  start: number;
  /** Its non-blank lines, trimmed, joined by '\n'. */
  key: string;
  lines: number;
  chars: number;
}

const CLOSER = /^[)\]}]/;
/** Blocks above longer than this are not compared (a loop copies short blocks; this bounds the work). */
const MAX_ROOTED_LINES = 40;

/** The blocks of `lines` from `from` on: each starts at a non-blank line indented `base` or less. */
function splitBlocks(lines: string[], base: number, from: number): Block[] {
  const out: Block[] = [];
  let cur: { start: number; indent: number; body: string[] } | null = null;
  const close = () => {
    if (!cur) return;
    const key = cur.body.join('\n');
    out.push({ start: cur.start, key, lines: cur.body.length, chars: key.replace(/\s/g, '').length });
  };
  for (let i = from; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === '') continue;
    const ind = indentOf(lines[i]);
    // Lines deeper than the current block's first line belong to it (a `def` at column 0 keeps its body).
    const starts = ind <= base && (cur === null || ind <= cur.indent) && !CLOSER.test(t);
    if (starts) {
      close();
      cur = { start: i, indent: ind, body: [] };
    }
    cur?.body.push(t);
  }
  close();
  return out;
}

/** Above the insertion, any level may be the result's: the key of the block under every line (2+ lines). */
function rootedBlocks(lines: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === '' || CLOSER.test(t)) continue;
    const ind = indentOf(lines[i]);
    const body = [t];
    for (let j = i + 1; j < lines.length && body.length < MAX_ROOTED_LINES; j++) {
      const u = lines[j].trim();
      if (u === '') continue;
      const d = indentOf(lines[j]);
      if (d > ind || (d === ind && CLOSER.test(u))) body.push(u);
      else break;
    }
    if (body.length >= 2) out.add(body.join('\n'));
  }
  return out;
}
