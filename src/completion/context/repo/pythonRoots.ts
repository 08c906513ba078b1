import { dirnameOf, type SourceFiles } from './sourceFiles';
import { fromWorkspaceScan } from './workspaceScan';

/** Folders tried for one top-level name at most, nearest the importing file first. */
const MAX_ROOTS = 4;

/**
 * The folders that hold a top-level Python package or module of this name anywhere in the workspace (a
 * subproject's `src/`, `libs/foo/`), as an installed or editable package puts them on sys.path: found from
 * the listed files alone (a package is a folder with `__init__.py` whose parent has none), nearest to `from`
 * first, packages before single modules.
 */
export async function pythonRootsFor(files: SourceFiles, from: string, topName: string): Promise<string[]> {
  const roots = (await fromWorkspaceScan(files, 'python-roots', async (listed) => topLevelNames(listed))).get(topName) ?? [];
  const near = (root: string) => sharedDepth(root, dirnameOf(from));
  return [...roots]
    .sort((a, b) => Number(b.isPackage) - Number(a.isPackage) || near(b.root) - near(a.root))
    .slice(0, MAX_ROOTS)
    .map((r) => r.root);
}

interface TopLevel {
  root: string;
  isPackage: boolean;
}

function topLevelNames(listed: string[]): Map<string, TopLevel[]> {
  const present = new Set(listed);
  const isPackage = (dir: string) => dir !== '' && (present.has(`${dir}/__init__.py`) || present.has(`${dir}/__init__.pyi`));
  const out = new Map<string, TopLevel[]>();
  const add = (name: string, root: string, pkg: boolean) => {
    const list = out.get(name) ?? [];
    if (!list.some((r) => r.root === root)) list.push({ root, isPackage: pkg });
    out.set(name, list);
  };
  for (const file of listed) {
    if (!/\.pyi?$/.test(file)) continue;
    let dir = dirnameOf(file);
    if (!isPackage(dir)) {
      add(file.slice(dir ? dir.length + 1 : 0).replace(/\.pyi?$/, ''), dir, false);
      continue;
    }
    while (isPackage(dirnameOf(dir))) dir = dirnameOf(dir);
    add(dir.slice(dir.lastIndexOf('/') + 1), dirnameOf(dir), true);
  }
  return out;
}

/** Leading folders two workspace paths share. */
function sharedDepth(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n] && x[n] !== '') n++;
  return n;
}
