import type { ExtraChunk } from '../../types';
import { CONTEXT_SOURCES, type ContextSnippet, type ContextSource } from './snippet';

/** How much each source's best snippet is worth against the others' when the budget is short. */
const SOURCE_WEIGHT: Record<ContextSource, number> = { definitions: 1.0, imports: 0.9, similar: 0.5, ring: 0.3 };
/**
 * Snippets longer than this many characters are worth less per character: a 64-line window of a recent file must
 * not push out three declarations the cursor uses when the budget is short (measured: with the ring and similar
 * windows ranked by weight alone, definition recall with every source fell below imports alone).
 */
const COST_UNIT = 400;

/** A snippet whose lines are this much in the prompt's own window already adds nothing. */
const IN_WINDOW_SHARE = 0.8;

/**
 * A snippet the file's last prompt showed ranks as if this much more worth: what fits the budget then changes only
 * when something clearly better comes (each change of the context's bytes makes the model read the file's window
 * after it again; near ties trade places as the cursor moves from block to block).
 */
const CONTEXT_HOLD = 1.25;

/**
 * One ranking and one budget over every source: duplicates (the same declaration from two sources, the same
 * text twice) and code already in the window are dropped, the best snippets are kept while they fit
 * `budgetChars`, and the kept ones are laid out by file, in the sources' fixed order (imports, ring,
 * definitions, similar: most stable first) and by line within a file. So the context is byte-identical
 * while the same snippets are chosen, and what changes with the cursor's symbols comes last.
 */
export function assembleContext(snippets: readonly ContextSnippet[], budgetChars: number, window: string, shown: readonly ExtraChunk[] = []): ExtraChunk[] {
  if (budgetChars <= 0 || snippets.length === 0) return [];
  const shownText = new Map<string, string>();
  for (const c of shown) shownText.set(c.path, `${shownText.get(c.path) ?? ''}\0${c.text}`);
  const held = (s: ContextSnippet) => shownText.get(s.path)?.includes(s.text.trimEnd()) === true;
  const worth = (s: ContextSnippet) => weight(s) * (held(s) ? CONTEXT_HOLD : 1);
  // Lines the prompt holds already: the window's, then each kept snippet's (a similar window that repeats an
  // imported declaration adds nothing).
  const windowLines = new Set(
    window
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 3),
  );
  const ranked = stableFirst(snippets)
    .map((s) => ({ s, worth: worth(s) }))
    .sort((a, b) => b.worth - a.worth || order(a.s) - order(b.s))
    .map(({ s }) => s);
  const keptNames = new Set<string>();
  const keptTexts = new Set<string>();
  const kept: ContextSnippet[] = [];
  let used = 0;
  const tooLong: ContextSnippet[] = [];
  const keep = (s: ContextSnippet, text: string, cost: number) => {
    used += cost;
    kept.push({ ...s, text });
    keptTexts.add(text);
    for (const n of s.names ?? []) keptNames.add(`${s.path}#${n}`);
    for (const l of text.split('\n')) if (l.trim().length > 3) windowLines.add(l.trim());
  };
  const fresh = (s: ContextSnippet, text: string) =>
    text.trim() !== '' && !keptTexts.has(text) && !s.names?.some((n) => keptNames.has(`${s.path}#${n}`)) && !inWindow(text, windowLines);
  for (const s of ranked) {
    const text = s.text.trimEnd();
    if (!fresh(s, text)) continue;
    // Each file's header costs a line: counted roughly as the path's length.
    const cost = text.length + 1 + s.path.length;
    if (used + cost > budgetChars) {
      if (s.source === 'imports' || s.source === 'definitions') tooLong.push(s);
      continue;
    }
    keep(s, text, cost);
  }
  // What is left of the budget goes to the declarations too long for it, in rank order, cut to their first lines:
  // a class's head and first members say more than nothing (a 60-line summary never fits 2,000 characters).
  for (const s of tooLong) {
    const text = s.text.trimEnd();
    const room = budgetChars - used - 1 - s.path.length;
    const head = headThatFits(text, room);
    if (head !== null && fresh(s, text)) keep(s, head, head.length + 1 + s.path.length);
  }
  return layout(kept);
}

/** Lines a cut declaration keeps at least (its signature and a member or two), else it is left out. */
const MIN_CUT_LINES = 3;

/** The first lines of `text` that fit `room` characters with a closing `…` line, or null when fewer than MIN_CUT_LINES do. */
function headThatFits(text: string, room: number): string | null {
  const lines = text.split('\n');
  let length = 0;
  let n = 0;
  while (n < lines.length && length + lines[n].length + 1 + 1 <= room) length += lines[n++].length + 1;
  if (n < MIN_CUT_LINES || n >= lines.length) return null;
  return `${lines.slice(0, n).join('\n')}\n…`;
}

/** Found for what the cursor line holds (receiver classes, the language server's definitions): it changes as the line is typed. */
function volatile(s: ContextSnippet): boolean {
  return s.atCursor === true || s.source === 'definitions';
}

/**
 * A declaration found for the cursor line that a stable source (the imports) offers too goes in at the stable
 * source's place and in its text, with the better of the two scores: its bytes then stay put while the line is
 * typed and the cursor moves (a language server's definition of an imported name would otherwise replace the
 * import's snippet on the lines that use it, and give it back on the others).
 */
function stableFirst(snippets: readonly ContextSnippet[]): ContextSnippet[] {
  const keyOf = (s: ContextSnippet, n: string) => `${s.path}#${n}`;
  const best = new Map<string, number>();
  for (const s of snippets) if (volatile(s)) for (const n of s.names ?? []) best.set(keyOf(s, n), Math.max(best.get(keyOf(s, n)) ?? 0, s.score));
  const stable = new Set<string>();
  for (const s of snippets) if (!volatile(s)) for (const n of s.names ?? []) if (best.has(keyOf(s, n))) stable.add(keyOf(s, n));
  return snippets.flatMap((s) => {
    const keys = (s.names ?? []).map((n) => keyOf(s, n));
    if (volatile(s)) return keys.some((k) => stable.has(k)) ? [] : [s];
    const raised = Math.max(s.score, ...keys.map((k) => best.get(k) ?? 0));
    return [raised === s.score ? s : { ...s, score: raised }];
  });
}

function weight(s: ContextSnippet): number {
  return (SOURCE_WEIGHT[s.source] * s.score) / Math.sqrt(Math.max(1, s.text.length / COST_UNIT));
}

function order(s: ContextSnippet): number {
  return CONTEXT_SOURCES.indexOf(s.atCursor ? 'definitions' : s.source);
}

function inWindow(text: string, windowLines: Set<string>): boolean {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 3);
  if (lines.length === 0) return true;
  let inside = 0;
  for (const l of lines) if (windowLines.has(l)) inside++;
  return inside / lines.length >= IN_WINDOW_SHARE;
}

/**
 * One chunk per file (ring chunks stay apart: they are windows, not declarations). Files go by their most
 * stable source, then by path (ring chunks by their age), snippets within a file by line: nothing here depends on
 * the scores, so the same snippets always give the same bytes.
 */
function layout(kept: ContextSnippet[]): ExtraChunk[] {
  const files = new Map<string, ContextSnippet[]>();
  for (const s of kept) {
    const key = s.source === 'ring' ? `ring\0${s.line}\0${s.path}` : `code\0${s.path}`;
    files.set(key, [...(files.get(key) ?? []), s]);
  }
  const groups = [...files.values()].map((list) => ({ list: [...list].sort((a, b) => a.line - b.line), rank: Math.min(...list.map(order)) }));
  groups.sort(
    (a, b) =>
      a.rank - b.rank ||
      (a.list[0].source === 'ring' ? a.list[0].line - b.list[0].line : a.list[0].path < b.list[0].path ? -1 : a.list[0].path > b.list[0].path ? 1 : 0),
  );
  return groups.map(({ list }) => ({
    path: list[0].path,
    text: list.map((s) => s.text).join('\n\n'),
    sources: CONTEXT_SOURCES.filter((source) => list.some((s) => s.source === source)),
  }));
}
