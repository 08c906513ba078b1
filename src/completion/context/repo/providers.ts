import { type CursorFile, IMPORT_LINE, importSnippets, receiverSnippets } from './importContext';
import { receiverChains } from './receiverTypes';
import type { ModuleIndex } from './moduleIndex';
import { MAX_PARSED_CHARS } from './parseSource';
import type { ContextProvider, GatherAt } from './repoContext';
import { type Candidate, similarSnippets } from './similarSnippets';
import { languageOfPath } from './sourceLanguage';

/** The cursor's block: context keyed by it holds still while the user types within a few lines. */
const BLOCK_LINES = 8;
/** Lines above the block that make the similarity query. */
const QUERY_LINES = 24;

function cursorFile(at: GatherAt): CursorFile | null {
  const lang = languageOfPath(at.path);
  if (!lang || at.length > MAX_PARSED_CHARS) return null;
  return { path: at.path, text: at.text(), lang, line: at.line };
}

/** Declarations of what the file imports from the workspace (tree-sitter; no language server). */
export function importsProvider(index: ModuleIndex): ContextProvider {
  return {
    source: 'imports',
    key: (at) => {
      if (!languageOfPath(at.path) || at.length > MAX_PARSED_CHARS) return 'none';
      // The file's import lines, and the cursor's block (names near the cursor rank first).
      const imports = at
        .text()
        .split('\n')
        .filter((l) => l.length < 1000 && IMPORT_LINE.test(l))
        .join('\n');
      return `${Math.floor(at.line / (BLOCK_LINES * 2))}\0${imports}`;
    },
    gather: async (at, signal) => {
      const file = cursorFile(at);
      return file ? importSnippets(file, index, signal) : [];
    },
  };
}

/**
 * The classes of the objects the cursor line uses (`self.plugins.`, `req.`), from their declared types: part of
 * the imports source (tree-sitter and text; no language server), asked again when the line's receivers change.
 * The classes of earlier lines stay (8 per file, at most 1.0 against the cursor line's 1.1): a file's code uses the
 * same few classes line after line (measured on the typing replay, one run each: the 0.5B shape's p99 pause was
 * 3.7 s with the classes replaced per line, 2.0 s with them kept, as before receivers were added).
 */
export function receiversProvider(index: ModuleIndex): ContextProvider {
  const chainsAt = (at: GatherAt) => receiverChains(at.text().split('\n', at.line + 1)[at.line] ?? '');
  return {
    source: 'imports',
    id: 'imports:receivers',
    keepEarlier: { max: 8, score: 1.0 },
    key: (at) => {
      if (!languageOfPath(at.path) || at.length > MAX_PARSED_CHARS) return 'none';
      const chains = chainsAt(at);
      return chains.length === 0 ? 'none' : `${at.line}\0${chains.map((c) => c.join('.')).join(',')}`;
    },
    gather: async (at, signal) => {
      const file = cursorFile(at);
      return file && chainsAt(at).length > 0 ? receiverSnippets(file, index, signal) : [];
    },
  };
}

/** Windows of other files like the code above the cursor's block (Jaccard over identifiers); what it showed holds. */
export function similarProvider(candidates: (at: GatherAt, signal: AbortSignal) => Promise<Candidate[]>): ContextProvider {
  const query = (at: GatherAt) => {
    const block = Math.floor(at.line / BLOCK_LINES) * BLOCK_LINES;
    const lines = at.length > MAX_PARSED_CHARS ? [] : at.text().split('\n');
    const end = block > 0 ? block : at.line;
    return lines.slice(Math.max(0, end - QUERY_LINES), end).join('\n');
  };
  return {
    source: 'similar',
    key: (at) => `${Math.floor(at.line / BLOCK_LINES)}\0${query(at).length}`,
    gather: async (at, signal, shown) => similarSnippets(query(at), await candidates(at, signal), at.path, undefined, shown),
  };
}
