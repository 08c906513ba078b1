import { indentOf } from '../../filters/filterContext';
import type { GenerateRule } from './ruleContext';

/** A block shorter than this (non-space characters) is not compared: `}` or `pass` repeat legitimately. */
const MIN_BLOCK_CHARS = 12;

/**
 * Small models loop by blocks, not only by lines: the default model wrote the same
 * `export function increment(value) { ... }` block after block until the token limit. Cuts the result
 * before the first block that is equal to the block right before it, or to an earlier block of at least two
 * lines, in the result or in the document above the insertion (a function copied from above is the same
 * loop). A block is a line at the result's outermost indentation with the deeper lines (and closing lines
 * such as `}` or `});`) after it; blocks are equal when their lines are, ignoring indentation and blank
 * lines. The lines before the first block (the rest of a body, the insertion line) are never cut.
 */
export const cutRepeatedBlock: GenerateRule = (text, ctx) => {
  const lines = text.split('\n');
  const base = Math.min(
    ...lines
      .slice(1)
      .filter((l) => l.trim() !== '')
      .map(indentOf),
  );
  if (!Number.isFinite(base)) return text;
  const blocks = splitBlocks(lines, base, 1);
  const earlier = new Set(
    splitBlocks(ctx.above.split('\n'), base, 0, true)
      .filter(multiLine)
      .map((b) => b.key),
  );
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (b.chars < MIN_BLOCK_CHARS) continue;
    const repeated = (i > 0 && blocks[i - 1].key === b.key) || (multiLine(b) && earlier.has(b.key));
    if (repeated) return lines.slice(0, b.start).join('\n').trimEnd();
    if (multiLine(b)) earlier.add(b.key);
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

const multiLine = (b: Block): boolean => b.lines >= 2;
const CLOSER = /^[)\]}]/;

/**
 * The blocks of `lines` from `from` on: each starts at a non-blank line indented `base` or less (exactly
 * `base` with `exact`, for the document above, whose other levels are not the result's).
 */
function splitBlocks(lines: string[], base: number, from: number, exact = false): Block[] {
  const out: Block[] = [];
  let cur: { start: number; body: string[] } | null = null;
  const close = () => {
    if (!cur) return;
    const key = cur.body.join('\n');
    out.push({ start: cur.start, key, lines: cur.body.length, chars: key.replace(/\s/g, '').length });
  };
  for (let i = from; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === '') continue;
    const ind = indentOf(lines[i]);
    const starts = (exact ? ind === base : ind <= base) && !CLOSER.test(t);
    if (starts) {
      close();
      cur = { start: i, body: [] };
    } else if (exact && ind < base) {
      // Above the insertion, a shallower line ends the current block without starting one.
      close();
      cur = null;
      continue;
    }
    cur?.body.push(t);
  }
  close();
  return out;
}
