import * as fs from 'node:fs';
import * as path from 'node:path';
import { normalizeRelative, type SourceFiles } from '../completion/context/repo/sourceFiles';
import { languageOfPath } from '../completion/context/repo/sourceLanguage';

/** Files larger than this are not read for context (bundles, data, logs). */
export const MAX_CONTEXT_FILE_BYTES = 1024 * 1024;
/** Folders a workspace scan never enters: dependencies, build output, VCS and tool caches. */
const SKIPPED_FOLDERS = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'dist',
  'out',
  'build',
  'coverage',
  '.next',
  '.nuxt',
  'target',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  'site-packages',
  '.vscode-test',
]);
/** Directory entries a scan looks at, at most (a workspace of 100,000 files costs no more than this). */
const MAX_SCANNED_ENTRIES = 20_000;
const SCAN_DEADLINE_MS = 200;

/**
 * The workspace's files on disk (the CLI, the benches, and the editor for `file:` workspaces). Every path is
 * resolved inside the root, also through symlinks (a link out of the workspace, or a loop, reads as missing).
 * Binary files (a NUL byte in the first 8 KB) and files over 1 MB read as missing. No `vscode` import.
 */
export class WorkspaceFiles implements SourceFiles {
  private readonly root: string;
  private realRoot: string | undefined;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private async inside(rel: string): Promise<string | undefined> {
    const norm = normalizeRelative(rel);
    if (norm === null || norm === '') return undefined;
    const abs = path.join(this.root, ...norm.split('/'));
    try {
      this.realRoot ??= await fs.promises.realpath(this.root);
      const real = await fs.promises.realpath(abs);
      const relative = path.relative(this.realRoot, real);
      if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
      return real;
    } catch {
      return undefined;
    }
  }

  async isFile(rel: string): Promise<boolean> {
    const abs = await this.inside(rel);
    if (!abs) return false;
    try {
      return (await fs.promises.stat(abs)).isFile();
    } catch {
      return false;
    }
  }

  async stamp(rel: string): Promise<string | undefined> {
    const abs = await this.inside(rel);
    if (!abs) return undefined;
    try {
      const st = await fs.promises.stat(abs);
      return st.isFile() ? `${st.mtimeMs}:${st.size}` : undefined;
    } catch {
      return undefined;
    }
  }

  async read(rel: string): Promise<string | undefined> {
    const abs = await this.inside(rel);
    if (!abs) return undefined;
    try {
      const st = await fs.promises.stat(abs);
      if (!st.isFile() || st.size > MAX_CONTEXT_FILE_BYTES) return undefined;
      const bytes = await fs.promises.readFile(abs);
      if (bytes.subarray(0, 8192).includes(0)) return undefined;
      return bytes.toString('utf8');
    } catch {
      return undefined;
    }
  }

  /**
   * Source files (by extension) breadth-first from the folder of `near`, then its parents' folders, then the
   * rest: bounded by entries visited and a deadline, never following a symlinked folder.
   */
  async list(limit: number, near?: string): Promise<string[]> {
    const out: string[] = [];
    const seen = new Set<string>();
    const deadline = performance.now() + SCAN_DEADLINE_MS;
    let entries = 0;
    const starts: string[] = [];
    const nearNorm = near ? normalizeRelative(near) : null;
    for (let dir = nearNorm ? path.posix.dirname(nearNorm) : '.'; ; dir = path.posix.dirname(dir)) {
      starts.push(dir === '.' ? '' : dir);
      if (dir === '.' || dir === '/' || dir === '') break;
    }
    const queue = [...starts];
    while (queue.length > 0 && out.length < limit && entries < MAX_SCANNED_ENTRIES && performance.now() < deadline) {
      const dir = queue.shift() as string;
      if (seen.has(dir)) continue;
      seen.add(dir);
      let items: fs.Dirent[];
      try {
        items = await fs.promises.readdir(path.join(this.root, ...dir.split('/').filter(Boolean)), { withFileTypes: true });
      } catch {
        continue;
      }
      items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of items) {
        entries++;
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (!SKIPPED_FOLDERS.has(e.name) && !e.name.startsWith('.')) queue.push(rel);
        } else if (e.isFile() && languageOfPath(rel) && !rel.endsWith('.d.ts') && out.length < limit) out.push(rel);
      }
    }
    return out;
  }
}
