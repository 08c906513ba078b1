import type { ExtraChunk } from '../../types';
import type { ChunkRing } from '../chunkRing';
import { assembleContext } from './assembleContext';
import type { ContextSnippet, ContextSource } from './snippet';

/** What a prompt's extra context is drawn from: the ring of recent chunks and the gathered repository context. */
export interface ContextSupply {
  ring?: ChunkRing;
  /** Snippets gathered ahead of time for a file (RepoContext.snippets): read, never awaited. */
  repo?: { snippets(path: string): ContextSnippet[] };
}

/** Characters of the window around the cursor that the ring compares its chunks with. */
const AROUND_BEFORE = 2000;
const AROUND_AFTER = 1000;

/**
 * The extra context of one prompt: the ring's chunks (oldest first, newest scoring highest) and the repository
 * snippets, ranked and fitted into `budgetChars` by assembleContext. `window` is the prompt's own text around
 * the cursor: what it already holds is not repeated. `shown`: the file's last extra context, which holds its place.
 */
export function extraContext(
  supply: ContextSupply,
  budgetChars: number,
  path: string,
  window: { prefix: string; suffix: string },
  enabled: (s: ContextSource) => boolean,
  shown: readonly ExtraChunk[] = [],
): ExtraChunk[] {
  if (budgetChars <= 0) return [];
  const snippets: ContextSnippet[] = [];
  if (supply.ring && enabled('ring')) {
    const chunks = supply.ring.select(budgetChars, path, window.prefix.slice(-AROUND_BEFORE) + window.suffix.slice(0, AROUND_AFTER));
    chunks.forEach((c, i) => {
      snippets.push({ source: 'ring', path: c.path, text: c.text, line: i, score: (i + 1) / chunks.length });
    });
  }
  if (supply.repo) snippets.push(...supply.repo.snippets(path));
  return assembleContext(snippets, budgetChars, window.prefix + window.suffix, shown);
}
