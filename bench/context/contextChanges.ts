// Counts the changes of a prompt's extra context from one prompt to the next in a file, by the source of the first
// chunk that differs: each change makes the model read everything after that chunk again (the file's window too).
import type { ExtraChunk } from '../../src/completion/types';

export class ContextChanges {
  changes = 0;
  /** The source(s) of the first changed chunk ('none': a chunk was removed at the end), per change. */
  readonly bySource: Record<string, number> = {};
  /** Characters after the first changed one, per change: what the model reads again besides the file's window. */
  readonly charsAfter: number[] = [];
  private last: { bytes: string; chunks: { sources: string; text: string }[] } | null = null;

  /** A new file: its first prompt is not a change. */
  reset(): void {
    this.last = null;
  }

  /** The next prompt's extra context; true when it differs from the last one's. */
  note(extra: readonly ExtraChunk[]): boolean {
    const chunks = extra.map((c) => ({ sources: (c.sources ?? []).join('+') || 'extra', text: `${c.path}\n${c.text}` }));
    const bytes = chunks.map((c) => c.text).join('\n\n');
    const last = this.last;
    this.last = { bytes, chunks };
    if (last === null || bytes === last.bytes) return false;
    this.changes++;
    const i = chunks.findIndex((c, k) => last.chunks[k]?.text !== c.text);
    const source = i < 0 ? (last.chunks[chunks.length]?.sources ?? 'none') : chunks[i].sources;
    this.bySource[source] = (this.bySource[source] ?? 0) + 1;
    this.charsAfter.push(bytes.length - commonPrefix(bytes, last.bytes));
    return true;
  }
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
