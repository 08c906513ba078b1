import { dirnameOf, normalizeRelative, type SourceFiles } from './sourceFiles';
import { languageOfPath } from './sourceLanguage';

/**
 * A workspace held in memory (an evaluation set's project, a test's fixture): the same answers as the files
 * on disk would give, binary and oversized texts included.
 */
export class MemoryFiles implements SourceFiles {
  private readonly files: Map<string, string>;

  constructor(
    files: ReadonlyMap<string, string> | Record<string, string>,
    private readonly maxChars = 1024 * 1024,
  ) {
    this.files = new Map(files instanceof Map ? files : Object.entries(files));
  }

  async read(path: string): Promise<string | undefined> {
    const p = normalizeRelative(path);
    const text = p === null ? undefined : this.files.get(p);
    if (text === undefined || text.length > this.maxChars || text.slice(0, 8192).includes('\0')) return undefined;
    return text;
  }

  async isFile(path: string): Promise<boolean> {
    const p = normalizeRelative(path);
    return p !== null && this.files.has(p);
  }

  async stamp(path: string): Promise<string | undefined> {
    const p = normalizeRelative(path);
    const text = p === null ? undefined : this.files.get(p);
    return text === undefined ? undefined : `${text.length}:${hashText(text)}`;
  }

  async list(limit: number, near?: string): Promise<string[]> {
    const dir = near ? dirnameOf(near) : '';
    const all = [...this.files.keys()].filter((p) => languageOfPath(p) && !p.endsWith('.d.ts'));
    // Nearest first: files of the same folder, then of the folders above, then the rest (as the disk scan does).
    const distance = (p: string) => {
      let d = dir;
      for (let up = 0; ; up++) {
        if (d === '' || p.startsWith(`${d}/`)) return up;
        d = dirnameOf(d);
      }
    };
    return all.sort((a, b) => distance(a) - distance(b) || (a < b ? -1 : a > b ? 1 : 0)).slice(0, limit);
  }
}

function hashText(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
