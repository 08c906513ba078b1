import * as path from 'node:path';

/**
 * "Is this path inside that folder?" for every platform Ghostline ships on. A plain `p.startsWith(dir + sep)`
 * is wrong on Windows and macOS: their default file systems ignore case, and VS Code hands out paths whose
 * drive letter case differs from Node's (`c:\Users\...` from a Uri's fsPath, `C:\Users\...` from
 * path.resolve), so a folder that is inside would be refused. It is also wrong for a drive or share root
 * (`C:\` + `\`). Takes the path module as a parameter so the Windows rules are unit-tested on Linux with
 * path.win32. No `vscode` import.
 */

/** The parts of node:path used here; path.win32 and path.posix both fit. */
export type PathModule = Pick<typeof path, 'resolve' | 'sep' | 'isAbsolute' | 'relative' | 'join' | 'dirname' | 'basename' | 'normalize'>;

/**
 * Whether file names on `platform`'s default file system compare without case: NTFS (win32) and APFS/HFS+
 * (darwin) do. A case-sensitive APFS volume exists but is rare; there a folder differing only in case would
 * count as the same one, which these checks accept because both must exist under Ghostline's own storage.
 */
export function foldsCase(platform: NodeJS.Platform): boolean {
  return platform === 'win32' || platform === 'darwin';
}

/**
 * The platform whose rules `p` follows: path.win32 is always Windows; a posix module is this machine's
 * (darwin on a Mac, where node:path is path.posix), or plain case-sensitive posix on Windows.
 */
function platformOf(p: PathModule): NodeJS.Platform {
  if (p.sep === '\\') return 'win32';
  return process.platform === 'win32' ? 'linux' : process.platform;
}

export interface InsideOptions {
  /** Default node:path (this machine); tests pass path.win32 or path.posix. */
  path?: PathModule;
  /** Default: foldsCase(platformOf(path)). */
  caseInsensitive?: boolean;
}

/** True when `p` resolves strictly inside `dir` (not to `dir` itself). Both are resolved first. */
export function isInside(dir: string, p: string, opts: InsideOptions = {}): boolean {
  const P = opts.path ?? path;
  const fold = opts.caseInsensitive ?? foldsCase(platformOf(P));
  let root = P.resolve(dir);
  // A drive or share root already ends with the separator (`C:\`, `/`); any other folder gets one.
  if (!root.endsWith(P.sep)) root += P.sep;
  const target = P.resolve(p);
  if (target.length <= root.length) return false;
  return fold ? target.slice(0, root.length).toLowerCase() === root.toLowerCase() : target.startsWith(root);
}

/** True when `a` and `b` resolve to the same path (without case where the platform ignores it). */
export function samePath(a: string, b: string, opts: InsideOptions = {}): boolean {
  const P = opts.path ?? path;
  const fold = opts.caseInsensitive ?? foldsCase(platformOf(P));
  const x = P.resolve(a).replace(/[\\/]+$/, '');
  const y = P.resolve(b).replace(/[\\/]+$/, '');
  return fold ? x.toLowerCase() === y.toLowerCase() : x === y;
}
