// Cursor positions for the oracle check: a document with a hole at the cursor, and what the author wrote there.
import type { TextSource } from '../../src/completion/types';

export type PositionKind = 'mid-line' | 'fresh-line' | 'multi-line' | 'after-cursor';
export const KINDS: readonly PositionKind[] = ['mid-line', 'fresh-line', 'multi-line', 'after-cursor'];

export interface OraclePosition {
  set: string;
  path: string;
  language: string;
  kind: PositionKind;
  /** The document as the user sees it: the author's text at the cursor not written yet. */
  doc: string;
  /** Offset of the cursor in `doc`. */
  cursor: number;
  /** What the author wrote at the cursor (a perfect model's answer). */
  truth: string;
  /** Set when `doc` is a window cut from its file (the eval sets), not the whole file. */
  cut?: TextSource['cut'];
}

/** A deterministic generator of numbers in [0, 1) (mulberry32): the same positions on every run. */
export { seededRandom as rng } from '../../src/completion/calibrate/workspacePositions';

const indentOf = (l: string) => /^[ \t]*/.exec(l)![0];
/** Lines a position is never made at: blank, or too long to be typed code (generated tables, minified). */
const usable = (l: string) => l.trim() !== '' && l.length <= 200;

/** Up to `n` positions of each kind in one file. */
export function positionsFromFile(set: string, path: string, language: string, text: string, n: number, random: () => number): OraclePosition[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const offsets: number[] = [];
  let at = 0;
  for (const l of lines) {
    offsets.push(at);
    at += l.length + 1;
  }
  const doc = lines.join('\n');
  const base = { set, path, language };
  const out: OraclePosition[] = [];
  const pick = <T>(xs: T[]): T[] => {
    const copy = [...xs];
    const chosen: T[] = [];
    while (copy.length > 0 && chosen.length < n) chosen.push(copy.splice(Math.floor(random() * copy.length), 1)[0]);
    return chosen;
  };
  const candidates = lines.map((_, i) => i).filter((i) => i > 0 && usable(lines[i]));

  // Mid-line: the cursor somewhere inside the line's code, the rest of the line not typed yet.
  for (const i of pick(candidates.filter((i) => lines[i].trim().length >= 6))) {
    const l = lines[i];
    const from = indentOf(l).length + 1;
    const to = l.trimEnd().length - 1;
    if (to <= from) continue;
    const c = from + Math.floor(random() * (to - from));
    const truth = l.slice(c).trimEnd();
    if (truth.trim() === '') continue;
    out.push({ ...base, kind: 'mid-line', doc: doc.slice(0, offsets[i] + c) + doc.slice(offsets[i] + l.length), cursor: offsets[i] + c, truth });
  }

  // Fresh line: as after Enter, the line's indentation typed and nothing else.
  for (const i of pick(candidates)) {
    const l = lines[i];
    const ind = indentOf(l);
    out.push({
      ...base,
      kind: 'fresh-line',
      doc: doc.slice(0, offsets[i] + ind.length) + doc.slice(offsets[i] + l.length),
      cursor: offsets[i] + ind.length,
      truth: l.trim(),
    });
  }

  // Multi-line: a fresh line after a block opener, the whole body not written yet (2-8 lines, the inline
  // preset's most lines of a block).
  const blocks = candidates.flatMap((i) => {
    const opener = lines[i].replace(/\s*(#|\/\/).*$/, '').trimEnd();
    if (!/[:{]$/.test(opener) || (language === 'python') !== opener.endsWith(':')) return [];
    const base = indentOf(lines[i]).length;
    let j = i + 1;
    while (j < lines.length && (lines[j].trim() === '' || indentOf(lines[j]).length > base)) j++;
    let end = j;
    while (end > i + 1 && lines[end - 1].trim() === '') end--;
    const body = lines.slice(i + 1, end);
    if (body.length < 2 || body.length > 8 || indentOf(body[0]).length <= base || !body.every((b) => b.length <= 200)) return [];
    return [[i, end] as const];
  });
  for (const [i, end] of pick(blocks)) {
    const body = lines.slice(i + 1, end);
    const ind = indentOf(body[0]);
    const start = offsets[i + 1];
    const stop = offsets[end - 1] + lines[end - 1].length;
    out.push({
      ...base,
      kind: 'multi-line',
      doc: doc.slice(0, start + ind.length) + doc.slice(stop),
      cursor: start + ind.length,
      truth: body.join('\n').slice(ind.length),
    });
  }

  // Code after the cursor as auto-closing leaves it: the cursor right after an opening bracket or quote,
  // and right of it the closers the editor inserted for every pair still open on the line.
  const pairs = candidates.flatMap((i) => autoClosed(lines[i], language).map((p) => [i, p] as const));
  for (const [i, p] of pick(pairs)) {
    const l = lines[i];
    out.push({
      ...base,
      kind: 'after-cursor',
      doc: doc.slice(0, offsets[i] + p.cursor) + p.closers + doc.slice(offsets[i] + l.length),
      cursor: offsets[i] + p.cursor,
      truth: l.slice(p.cursor, p.close),
    });
  }
  return out;
}

export interface AutoClosed {
  /** Right after the opener. */
  cursor: number;
  /** Where the opener's own closer is. */
  close: number;
  /** What auto-closing leaves right of the cursor: the closers of every pair still open there, innermost first. */
  closers: string;
}

const PAIRS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '"': '"', "'": "'" };

/**
 * The openers of a line whose pair closes on the same line, with what an editor's auto-closing puts right
 * of the cursor after typing each. Only lines where every pair closes on the line (typed left to right with
 * auto-closing, such a line has exactly these closers after the cursor), no template literals, no
 * triple quotes; a comment ends the line.
 */
export function autoClosed(line: string, language: string): AutoClosed[] {
  if (line.includes('`') || line.includes('"""') || line.includes("'''")) return [];
  const comment = language === 'python' ? '#' : '//';
  const stack: { ch: string; at: number }[] = [];
  const found: { cursor: number; close: number; outer: number[] }[] = [];
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    const top = stack[stack.length - 1];
    if (top && (top.ch === '"' || top.ch === "'")) {
      if (ch === '\\') i++;
      else if (ch === top.ch) close(i);
      continue;
    }
    if (line.startsWith(comment, i)) break;
    if (PAIRS[ch]) {
      // A quote inside a word is an apostrophe or a prefix (f"), not an opener to pair.
      if ((ch === "'" || ch === '"') && /\w/.test(line[i - 1] ?? '') && !/^[rbfuRBFU]+$/.test(/\w+$/.exec(line.slice(0, i))![0])) return [];
      stack.push({ ch, at: i });
    } else if (ch === ')' || ch === ']' || ch === '}') {
      if (!top || PAIRS[top.ch] !== ch) return [];
      close(i);
    }
  }
  if (stack.length > 0) return [];
  return found
    .filter((f) => f.close > f.cursor && line.slice(f.cursor, f.close).trim() !== '')
    .map((f) => ({ cursor: f.cursor, close: f.close, closers: f.outer.map((o) => PAIRS[line[o]]).join('') }));

  function close(i: number) {
    const opened = stack.pop()!;
    // The closers right of the cursor were, innermost first: this pair's, then those of the pairs around it.
    found.push({ cursor: opened.at + 1, close: i, outer: [opened.at, ...stack.map((s) => s.at).reverse()] });
  }
}
