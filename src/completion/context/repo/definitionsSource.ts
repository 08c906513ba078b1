import { identifierSet } from './identifiers';
import type { GatherAt, KeepEarlier } from './repoContext';

// The part of the definitions source (the editor's language servers, src/vscode/definitionsProvider.ts) that needs
// no editor: which symbols it asks about, when it asks again and what it keeps, shared with the typing replay.

/** Identifiers asked about per gather at most (each costs two language-server requests). */
const MAX_SYMBOLS = 6;
/** Lines longer than this are not read for symbols (a minified line). */
const MAX_LINE_CHARS = 1000;
/** Documents longer than this are not read at all. */
const MAX_DOCUMENT_CHARS = 2_000_000;

/** An identifier at the cursor that a definitions source asks about, and where it is. */
export interface SymbolAt {
  name: string;
  line: number;
  character: number;
}

/**
 * The identifiers of the cursor line and the line above, nearest the cursor first (the last on the cursor line
 * first), without keywords and short names: what the definitions source looks up.
 */
export function symbolsNear(at: GatherAt): SymbolAt[] {
  if (at.length > MAX_DOCUMENT_CHARS) return [];
  const lines = at.text().split('\n', at.line + 1);
  const out: SymbolAt[] = [];
  const seen = new Set<string>();
  for (const line of [at.line, at.line - 1]) {
    const text = lines[line];
    if (text === undefined || text.length > MAX_LINE_CHARS) continue;
    const known = identifierSet(text);
    for (const m of [...text.matchAll(/[A-Za-z_$][A-Za-z0-9_$]*/g)].reverse()) {
      if (!known.has(m[0]) || seen.has(m[0])) continue;
      seen.add(m[0]);
      out.push({ name: m[0], line, character: m.index ?? 0 });
    }
  }
  return out.slice(0, MAX_SYMBOLS);
}

/** The definitions source's key: asked again when the cursor line or its symbols change. */
export function definitionsKey(at: GatherAt): string {
  return `${at.line}\0${symbolsNear(at)
    .map((s) => s.name)
    .join(',')}`;
}

/**
 * Definitions found on earlier lines stay (12 per file): most lines use no symbol of another file, and a line that
 * does often uses one an earlier line did. Replaced per line, the block would empty and fill again as the cursor
 * moves, and each change makes the model read the file's window again. An earlier one scores at most 0.8, below
 * the cursor line's three nearest symbols (1.0, 0.9, 0.8): lower, it would fall out of a tight budget as soon as
 * it stopped being fresh, which is a change too (`npm run bench:context-stability`: at most 0.5 kept fewer of
 * the changes; not capped, one fewer in a hundred moves than at 0.8).
 */
export const DEFINITIONS_KEEP_EARLIER: KeepEarlier = { max: 12, score: 0.8 };
