import type { ImportRef } from './importsOf';
import { dirnameOf, joinPath, normalizeRelative, type SourceFiles } from './sourceFiles';
import { pythonRootsFor } from './pythonRoots';
import { isScript, type SourceLanguage } from './sourceLanguage';
import { mappedImportBases } from './tsconfigPaths';
import { isDeclaredDependency, workspacePackageBases } from './workspacePackages';

const SCRIPT_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
const INDEX_FILES = ['index.ts', 'index.tsx', 'index.js', 'index.jsx', 'index.mjs'];
/** Folders that hold a project's sources under its root, for package-local (non-relative) imports. */
const SOURCE_ROOTS = ['', 'src', 'lib'];

/**
 * The workspace file an import refers to, or null (a package from node_modules or site-packages, a path that does
 * not exist). TypeScript/JavaScript: relative paths with or without an extension (`./x.js` may name `x.ts`),
 * folders with an `index` file, the project's `paths` and `baseUrl` (tsconfig.json or jsconfig.json), the
 * workspace's own packages by name (monorepos), and package-local paths under the root, `src/` or `lib/` (`@/x`
 * and `~/x` mean `src/x`). Python: `.`-relative modules, and absolute ones under the root, `src/`, a folder
 * above the file (the project's top package), or wherever the workspace holds that top-level package (another
 * subproject); a package is its `__init__.py`.
 */
export async function resolveImport(files: SourceFiles, from: string, ref: Pick<ImportRef, 'specifier'>, lang: SourceLanguage): Promise<string | null> {
  return isScript(lang) ? resolveScript(files, from, ref.specifier) : resolvePython(files, from, ref.specifier);
}

async function firstFile(files: SourceFiles, candidates: (string | null)[]): Promise<string | null> {
  for (const c of candidates) if (c !== null && c !== '' && (await files.isFile(c))) return c;
  return null;
}

function scriptCandidates(base: string): (string | null)[] {
  const out: (string | null)[] = [base];
  // TypeScript's ESM style names the emitted file: './x.js' is './x.ts' in the sources.
  const emitted = /\.(m|c)?js$/.exec(base);
  if (emitted) {
    const stem = base.slice(0, -emitted[0].length);
    out.push(`${stem}.${emitted[1] ?? ''}ts`, `${stem}.tsx`);
  }
  for (const ext of SCRIPT_EXTENSIONS) out.push(base + ext);
  for (const index of INDEX_FILES) out.push(joinPath(base, index));
  return out;
}

async function resolveScript(files: SourceFiles, from: string, specifier: string): Promise<string | null> {
  if (specifier.startsWith('.')) {
    const base = joinPath(dirnameOf(from), specifier);
    return base === null ? null : firstFile(files, scriptCandidates(base));
  }
  // The project's own mapping (tsconfig/jsconfig `paths` and `baseUrl`) first, then a package of the
  // workspace by its name, then the usual layouts; not for a node built-in or a package the project declares
  // as a dependency (node_modules has it: the layouts would only cost dozens of file checks per gather).
  const mapped = [...(await mappedImportBases(files, from, specifier)), ...(await workspacePackageBases(files, specifier))];
  if (mapped.length === 0 && (specifier.startsWith('node:') || (await isDeclaredDependency(files, from, specifier)))) return null;
  const aliased = /^[@~]\//.test(specifier) ? `src/${specifier.slice(2)}` : null;
  const bases = [...mapped, ...(aliased ? [aliased] : SOURCE_ROOTS.map((r) => joinPath(r, specifier)))];
  for (const base of bases) {
    if (base === null) continue;
    const found = await firstFile(files, scriptCandidates(base));
    if (found) return found;
  }
  return null;
}

function pythonCandidates(base: string): string[] {
  return [`${base}.py`, `${base}/__init__.py`, `${base}.pyi`, `${base}/__init__.pyi`];
}

async function resolvePython(files: SourceFiles, from: string, specifier: string): Promise<string | null> {
  const dots = /^\.*/.exec(specifier)?.[0].length ?? 0;
  const modulePath = specifier.slice(dots).split('.').filter(Boolean).join('/');
  if (dots > 0) {
    let dir = dirnameOf(from);
    for (let i = 1; i < dots; i++) {
      if (dir === '') return null;
      dir = dirnameOf(dir);
    }
    if (modulePath === '') return firstFile(files, [joinPath(dir, '__init__.py'), joinPath(dir, '__init__.pyi')]);
    const base = joinPath(dir, modulePath);
    return base === null ? null : firstFile(files, pythonCandidates(base));
  }
  if (modulePath === '') return null;
  // Roots to try: the workspace root and src/, then every folder above the file (a project inside the
  // workspace), then wherever the workspace holds a top-level package of that name (another subproject).
  const roots = new Set<string>(['', 'src']);
  for (let dir = dirnameOf(from); dir !== ''; dir = dirnameOf(dir)) roots.add(dir);
  for (const root of await pythonRootsFor(files, from, modulePath.split('/')[0])) roots.add(root);
  for (const root of roots) {
    const base = normalizeRelative(root ? `${root}/${modulePath}` : modulePath);
    if (base === null) continue;
    const found = await firstFile(files, pythonCandidates(base));
    if (found) return found;
  }
  return null;
}

/** Python `from pkg import name` where `name` is a submodule of the package `pkgFile` (its `__init__.py`). */
export async function resolvePythonSubmodule(files: SourceFiles, pkgFile: string, name: string): Promise<string | null> {
  if (!/__init__\.pyi?$/.test(pkgFile)) return null;
  const base = joinPath(dirnameOf(pkgFile), name);
  return base === null ? null : firstFile(files, pythonCandidates(base));
}
