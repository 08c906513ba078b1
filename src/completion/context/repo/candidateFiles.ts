import { LRUCache } from 'lru-cache';
import type { Candidate } from './similarSnippets';
import type { SourceFiles } from './sourceFiles';

/** Workspace files scanned for similar code at most, and characters read from them at most per gather. */
const SCANNED_FILES = 200;
const SCANNED_CHARS = 4_000_000;
/** How long a scan's file list is reused before the workspace is listed again. */
const LIST_TTL_MS = 30_000;

/**
 * The files similar code is looked for in: the editor's open documents first (what the user is working on,
 * with unsaved text), then a bounded scan of the workspace near the current file. File texts are cached by
 * stamp, so a gather after the first reads only what changed.
 */
export class CandidateFiles {
  private readonly texts = new LRUCache<string, { stamp: string; text: string | undefined }>({ max: SCANNED_FILES * 2 });
  private listed: { near: string; at: number; paths: Promise<string[]> } | null = null;

  constructor(
    private readonly files: SourceFiles,
    private readonly open: () => Candidate[] = () => [],
    private readonly now: () => number = () => Date.now(),
  ) {}

  async candidates(currentPath: string, signal?: AbortSignal): Promise<Candidate[]> {
    const out: Candidate[] = [];
    const seen = new Set<string>([currentPath]);
    for (const c of this.open()) {
      if (seen.has(c.path)) continue;
      seen.add(c.path);
      out.push(c);
    }
    const dir = currentPath.includes('/') ? currentPath.slice(0, currentPath.lastIndexOf('/')) : '';
    if (!this.listed || this.listed.near !== dir || this.now() - this.listed.at > LIST_TTL_MS) {
      this.listed = { near: dir, at: this.now(), paths: this.files.list(SCANNED_FILES, currentPath) };
    }
    let chars = out.reduce((n, c) => n + c.text.length, 0);
    for (const path of await this.listed.paths) {
      if (signal?.aborted || chars > SCANNED_CHARS) break;
      if (seen.has(path)) continue;
      seen.add(path);
      const text = await this.read(path);
      if (text === undefined) continue;
      chars += text.length;
      out.push({ path, text });
    }
    return out;
  }

  private async read(path: string): Promise<string | undefined> {
    const stamp = (await this.files.stamp(path)) ?? '';
    const hit = this.texts.get(path);
    if (hit && stamp !== '' && hit.stamp === stamp) return hit.text;
    const text = await this.files.read(path);
    this.texts.set(path, { stamp, text });
    return text;
  }
}
