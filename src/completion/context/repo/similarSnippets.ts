import { identifierSet, jaccardOf } from './identifiers';
import type { ContextSnippet } from './snippet';

/** Lines per window of a candidate file, and the step between windows (Copilot's neighbouring-tab windows are about this size). */
const WINDOW_LINES = 20;
const WINDOW_STEP = 10;
/** Below this similarity a window is noise, however it ranks. */
const MIN_SIMILARITY = 0.12;
/** Characters of a candidate file that are windowed at most (the rest of a huge file is not read). */
const MAX_FILE_CHARS = 300_000;
/**
 * A window shown for the last query stays until another is this much more similar to the new one. The query
 * moves with the cursor's block, and neighbouring windows (half-overlapping) or files often trade places by a few
 * hundredths; each trade changes the context's bytes, which costs the model a reading of the file's window again.
 */
const SIMILAR_HOLD = 1.25;

export interface Candidate {
  path: string;
  text: string;
}

/**
 * Windows of other files that look like the code around the cursor: Jaccard similarity of their identifier
 * sets against the query's (the lines above the cursor, so the query holds still while the cursor line is
 * typed). The best window per file, the best `limit` files; the windows `shown` for the last query rank as if
 * SIMILAR_HOLD times as similar (their score stays their own).
 */
export function similarSnippets(
  query: string,
  candidates: readonly Candidate[],
  currentPath: string,
  limit = 3,
  shown: readonly ContextSnippet[] = [],
): ContextSnippet[] {
  const q = identifierSet(query);
  if (q.size === 0) return [];
  const held = new Set(shown.map((s) => `${s.path}\0${s.line}`));
  const rank = (s: ContextSnippet) => (held.has(`${s.path}\0${s.line}`) ? s.score * SIMILAR_HOLD : s.score);
  const best: ContextSnippet[] = [];
  for (const c of candidates) {
    if (c.path === currentPath) continue;
    const lines = c.text.slice(0, MAX_FILE_CHARS).split('\n');
    let top: ContextSnippet | null = null;
    for (let start = 0; start < Math.max(1, lines.length - WINDOW_STEP); start += WINDOW_STEP) {
      const window = lines.slice(start, start + WINDOW_LINES);
      const score = jaccardOf(q, identifierSet(window.join('\n')));
      const candidate: ContextSnippet = { source: 'similar', path: c.path, text: '', line: start, score };
      if (rank(candidate) < MIN_SIMILARITY) continue;
      candidate.text = trimBlank(window).join('\n');
      if (!top || rank(candidate) > rank(top)) top = candidate;
    }
    if (top?.text.trim()) best.push(top);
  }
  return best.sort((a, b) => rank(b) - rank(a) || (a.path < b.path ? -1 : 1)).slice(0, limit);
}

function trimBlank(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && !lines[a].trim()) a++;
  while (b > a && !lines[b - 1].trim()) b--;
  return lines.slice(a, b);
}
