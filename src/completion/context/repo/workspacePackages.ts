import { dirnameOf, joinPath, type SourceFiles } from './sourceFiles';
import { starMatch } from './starPattern';
import { fromWorkspaceScan } from './workspaceScan';

/** A package of the workspace (npm, yarn or pnpm workspaces; a folder with its own package.json). */
interface WorkspacePackage {
  dir: string;
  /** Where its entry may be, most likely first: the fields that name it, and the sources of built ones. */
  entries: string[];
  /** `exports` subpaths (`models/*`, without the `./`) and the paths they name. */
  subpaths: [pattern: string, targets: string[]][];
  /** The packages it declares it uses (dependencies of every kind): node resolves those from node_modules. */
  dependencies: Set<string>;
}

interface WorkspaceManifests {
  byName: Map<string, WorkspacePackage>;
  /** Every package.json found, named or not (a workspace root often has no name), deepest first. */
  all: WorkspacePackage[];
}

/** Folders builds write to, whose sources are usually in `src/` beside them. */
const BUILD_DIRS = /^(dist|lib|build|out|esm|cjs)\//;

/**
 * The workspace folders a bare import of a workspace package (`@acme/core`, `@acme/core/models/user`,
 * `shared-utils`) may resolve to, most likely first, as node resolves it through the workspace's links in
 * node_modules (which Ghostline does not read): the package's entry (`source`, `types`, `module`, `main`,
 * `exports["."]`, with `dist/x.js` tried as `src/x` too) or `src/index`, and a subpath as `exports` maps it
 * (`./models/*`), else under `src/` or the package's folder. Empty when no package of the workspace has that name.
 */
export async function workspacePackageBases(files: SourceFiles, specifier: string): Promise<string[]> {
  const name = packageName(specifier);
  const pkg = name === null ? undefined : (await packagesOf(files)).byName.get(name);
  if (!pkg || name === null) return [];
  const sub = specifier.slice(name.length + 1);
  if (!sub) return [...pkg.entries, ...[joinPath(pkg.dir, 'src/index'), joinPath(pkg.dir, 'index')].filter((b): b is string => b !== null)];
  const exported = pkg.subpaths.flatMap(([pattern, targets]) => {
    const star = starMatch(pattern, sub);
    return star === null ? [] : targets.map((t) => t.replace('*', star));
  });
  return [...withSources(pkg.dir, exported), ...[joinPath(pkg.dir, `src/${sub}`), joinPath(pkg.dir, sub)].filter((b): b is string => b !== null)];
}

/**
 * Whether `specifier` names a package that the package.json nearest above `from` declares as a dependency
 * and the workspace does not hold: node takes it from node_modules, so no folder of the workspace is it.
 */
export async function isDeclaredDependency(files: SourceFiles, from: string, specifier: string): Promise<boolean> {
  const name = packageName(specifier);
  if (name === null) return false;
  const manifests = await packagesOf(files);
  if (manifests.byName.has(name)) return false;
  const owner = manifests.all.find((m) => m.dir === '' || from.startsWith(`${m.dir}/`));
  return owner?.dependencies.has(name) ?? false;
}

/** `@scope/name` or `name`, the package a bare specifier imports from; null for one that names none. */
function packageName(specifier: string): string | null {
  const parts = specifier.split('/');
  const n = specifier.startsWith('@') ? 2 : 1;
  if (parts.length < n || parts.slice(0, n).some((p) => p === '' || p === '.' || p === '..')) return null;
  return parts.slice(0, n).join('/');
}

function packagesOf(files: SourceFiles): Promise<WorkspaceManifests> {
  return fromWorkspaceScan(files, 'packages', (listed) => scanPackages(files, listed));
}

/** The packages whose folders hold listed sources: a package.json in each folder above them is read. */
async function scanPackages(files: SourceFiles, listed: string[]): Promise<WorkspaceManifests> {
  const dirs = new Set<string>();
  for (const file of listed)
    for (let d = dirnameOf(file); !dirs.has(d); d = dirnameOf(d)) {
      dirs.add(d);
      if (d === '') break;
    }
  const byName = new Map<string, WorkspacePackage>();
  const all: WorkspacePackage[] = [];
  for (const dir of dirs) {
    const text = await files.read(dir ? `${dir}/package.json` : 'package.json');
    const found = text === undefined ? null : packageOf(text, dir);
    if (!found) continue;
    all.push(found.pkg);
    // Two folders of one name (a fixture copy, an example): the one nearer the root wins.
    const other = found.name === undefined ? undefined : byName.get(found.name);
    if (found.name !== undefined && (!other || depth(dir) < depth(other.dir))) byName.set(found.name, found.pkg);
  }
  all.sort((a, b) => depth(b.dir) - depth(a.dir));
  return { byName, all };
}

function depth(dir: string): number {
  return dir === '' ? 0 : dir.split('/').length;
}

function packageOf(text: string, dir: string): { name?: string; pkg: WorkspacePackage } | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null) return null;
  const p = json as Record<string, unknown>;
  const exported = exportsMap(p.exports);
  const named = [p.source, p.types, p.typings, ...targetsOf(exported['.']), p.module, p.main].filter((e): e is string => typeof e === 'string');
  const subpaths: WorkspacePackage['subpaths'] = Object.entries(exported)
    .filter(([key]) => key.startsWith('./') && (key.match(/\*/g) ?? []).length <= 1)
    .map(([key, value]) => [key.slice(2), targetsOf(value)]);
  const dependencies = new Set(
    ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((k) =>
      typeof p[k] === 'object' && p[k] !== null ? Object.keys(p[k] as object) : [],
    ),
  );
  const name = typeof p.name === 'string' && p.name !== '' ? p.name : undefined;
  return { name, pkg: { dir, entries: withSources(dir, named), subpaths, dependencies } };
}

/** `exports` as subpath -> conditions: a string or a conditions object alone is the package's "." entry. */
function exportsMap(e: unknown): Record<string, unknown> {
  if (typeof e === 'string' || Array.isArray(e)) return { '.': e };
  if (typeof e !== 'object' || e === null) return {};
  const o = e as Record<string, unknown>;
  return Object.keys(o).some((k) => k.startsWith('.')) ? o : { '.': o };
}

/** The paths an `exports` value names, types first (one level of conditions: types, import, default, ...). */
function targetsOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(targetsOf);
  if (typeof v !== 'object' || v === null) return [];
  const o = v as Record<string, unknown>;
  const order = ['source', 'types', 'import', 'default', 'require', ...Object.keys(o)];
  return [...new Set(order.flatMap((k) => (typeof o[k] === 'string' ? [o[k] as string] : [])))];
}

/** Each path in the package, a built one (`dist/x.js`) after its likely source (`src/x`). */
function withSources(dir: string, paths: string[]): string[] {
  const out: string[] = [];
  for (const entry of paths) {
    const rel = entry.replace(/^\.\//, '');
    const source = BUILD_DIRS.test(rel) ? rel.replace(BUILD_DIRS, 'src/').replace(/(\.d)?\.(m|c)?[jt]s$/, '') : null;
    for (const e of [source, rel]) {
      const path = e === null ? null : joinPath(dir, e);
      if (path !== null && !out.includes(path)) out.push(path);
    }
  }
  return out;
}
