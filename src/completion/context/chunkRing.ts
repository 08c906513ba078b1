import type { ExtraChunk } from '../types';

export interface ChunkRingOptions {
  /** Chunks kept (oldest evicted first). */
  capacity: number;
  /** Lines per chunk at most. */
  chunkLines: number;
}

/**
 * Extra context from other files the user viewed, edited, saved or copied from (llama.vscode's "ring"):
 * a few chunks of lines, near-duplicates dropped (Jaccard similarity of their line sets above 0.9).
 */
export class ChunkRing {
  private chunks: (ExtraChunk & { lines: Set<string> })[] = [];

  constructor(private readonly opts: ChunkRingOptions = { capacity: 16, chunkLines: 64 }) {}

  get size(): number {
    return this.chunks.length;
  }

  /** Adds the chunk of `lines` centred on `aroundLine`. Returns false when it was a near-duplicate. */
  add(path: string, lines: string[], aroundLine = 0): boolean {
    const half = Math.floor(this.opts.chunkLines / 2);
    const start = Math.max(0, Math.min(aroundLine - half, lines.length - this.opts.chunkLines));
    const picked = lines.slice(start, start + this.opts.chunkLines);
    if (picked.join('').trim() === '') return false;
    const set = lineSet(picked);
    // A newer view of (almost) the same code replaces the older one.
    this.chunks = this.chunks.filter((c) => jaccard(c.lines, set) <= 0.9);
    this.chunks.push({ path, text: picked.join('\n'), lines: set });
    while (this.chunks.length > this.opts.capacity) this.chunks.shift();
    return true;
  }

  /**
   * Chunks for a prompt, newest last (closest to the cursor's file), within `budgetChars`, skipping the
   * current file and chunks too similar to the text around the cursor (they only invite repetition).
   * Oldest first keeps the prompt head stable while new chunks arrive at the end.
   */
  select(budgetChars: number, currentPath: string, aroundCursor: string): ExtraChunk[] {
    const cursorLines = lineSet(aroundCursor.split('\n'));
    const out: ExtraChunk[] = [];
    let used = 0;
    for (let i = this.chunks.length - 1; i >= 0; i--) {
      const c = this.chunks[i];
      if (c.path === currentPath || jaccard(c.lines, cursorLines) > 0.5) continue;
      if (used + c.text.length > budgetChars) continue;
      used += c.text.length;
      out.unshift({ path: c.path, text: c.text });
    }
    return out;
  }

  clear(): void {
    this.chunks = [];
  }
}

function lineSet(lines: string[]): Set<string> {
  return new Set(lines.map((l) => l.trim()).filter((l) => l.length > 0));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
