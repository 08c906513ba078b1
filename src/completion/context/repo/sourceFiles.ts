/**
 * Read access to the workspace's files for the context providers, by workspace-relative path with `/`
 * separators. Implementations keep every read inside the workspace, refuse binary and oversized files, and
 * bound how much of a large workspace a scan visits: a provider may ask for anything and gets nothing back
 * rather than an error.
 */
export interface SourceFiles {
  /** The file's text, or undefined when it is missing, not a regular file, binary, too large or outside the workspace. */
  read(path: string): Promise<string | undefined>;
  /** Whether a regular file is there (cheaper than read for resolving imports). */
  isFile(path: string): Promise<boolean>;
  /** Source files of the workspace, a bounded scan (at most `limit` paths), nearest to `near` first. */
  list(limit: number, near?: string): Promise<string[]>;
  /** A token that changes when the file does (mtime and size), to key caches; undefined when unknown. */
  stamp(path: string): Promise<string | undefined>;
}

/** `a/b/../c` -> `a/c`; null when the path climbs out of the workspace or is absolute. */
export function normalizeRelative(path: string): string | null {
  const out: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(part);
  }
  if (/^[A-Za-z]:$/.test(out[0] ?? '') || path.startsWith('/')) return null;
  return out.join('/');
}

/** The folder part of a workspace path ('' at the root). */
export function dirnameOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function joinPath(dir: string, rel: string): string | null {
  return normalizeRelative(dir ? `${dir}/${rel}` : rel);
}
