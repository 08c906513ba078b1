import { identifierSet, jaccardOf } from './identifiers';
import type { ContextSnippet } from './snippet';

/** Lines per window of a candidate file, and the step between windows (Copilot's neighbouring-tab windows are about this size). */
const WINDOW_LINES = 20;
const WINDOW_STEP = 10;
/** Below this similarity a window is noise, however it ranks. */
const MIN_SIMILARITY = 0.12;
/** Characters of a candidate file that are windowed at most (the rest of a huge file is not read). */
const MAX_FILE_CHARS = 300_000;

export interface Candidate {
  path: string;
  text: string;
}

/**
 * Windows of other files that look like the code around the cursor: Jaccard similarity of their identifier
 * sets against the query's (the lines above the cursor, so the query holds still while the cursor line is
 * typed). The best window per file, the best `limit` files.
 */
export function similarSnippets(query: string, candidates: readonly Candidate[], currentPath: string, limit = 3): ContextSnippet[] {
  const q = identifierSet(query);
  if (q.size === 0) return [];
  const best: ContextSnippet[] = [];
  for (const c of candidates) {
    if (c.path === currentPath) continue;
    const lines = c.text.slice(0, MAX_FILE_CHARS).split('\n');
    let top: ContextSnippet | null = null;
    for (let start = 0; start < Math.max(1, lines.length - WINDOW_STEP); start += WINDOW_STEP) {
      const window = lines.slice(start, start + WINDOW_LINES);
      const score = jaccardOf(q, identifierSet(window.join('\n')));
      if (score >= MIN_SIMILARITY && (!top || score > top.score))
        top = { source: 'similar', path: c.path, text: trimBlank(window).join('\n'), line: start, score };
    }
    if (top?.text.trim()) best.push(top);
  }
  return best.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1)).slice(0, limit);
}

function trimBlank(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && !lines[a].trim()) a++;
  while (b > a && !lines[b - 1].trim()) b--;
  return lines.slice(a, b);
}
