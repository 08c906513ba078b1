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
  const parts = specifier.split('/');
  const nameParts = specifier.startsWith('@') ? 2 : 1;
  if (parts.length < nameParts || parts.slice(0, nameParts).some((p) => p === '' || p === '.' || p === '..')) return [];
  const pkg = (await packagesOf(files)).get(parts.slice(0, nameParts).join('/'));
  if (!pkg) return [];
  const sub = parts.slice(nameParts).join('/');
  if (!sub) return [...pkg.entries, ...[joinPath(pkg.dir, 'src/index'), joinPath(pkg.dir, 'index')].filter((b): b is string => b !== null)];
  const exported = pkg.subpaths.flatMap(([pattern, targets]) => {
    const star = starMatch(pattern, sub);
    return star === null ? [] : targets.map((t) => t.replace('*', star));
  });
  return [...withSources(pkg.dir, exported), ...[joinPath(pkg.dir, `src/${sub}`), joinPath(pkg.dir, sub)].filter((b): b is string => b !== null)];
}

function packagesOf(files: SourceFiles): Promise<Map<string, WorkspacePackage>> {
  return fromWorkspaceScan(files, 'packages', (listed) => scanPackages(files, listed));
}

/** The packages whose folders hold listed sources: a package.json in each folder above them is read. */
async function scanPackages(files: SourceFiles, listed: string[]): Promise<Map<string, WorkspacePackage>> {
  const dirs = new Set<string>();
  for (const file of listed)
    for (let d = dirnameOf(file); !dirs.has(d); d = dirnameOf(d)) {
      dirs.add(d);
      if (d === '') break;
    }
  const out = new Map<string, WorkspacePackage>();
  for (const dir of dirs) {
    const text = await files.read(dir ? `${dir}/package.json` : 'package.json');
    const pkg = text === undefined ? null : packageOf(text, dir);
    // Two folders of one name (a fixture copy, an example): the one nearer the root wins.
    if (pkg && (!out.has(pkg.name) || dir.split('/').length < (out.get(pkg.name)?.dir.split('/').length ?? 0))) out.set(pkg.name, pkg.pkg);
  }
  return out;
}

function packageOf(text: string, dir: string): { name: string; pkg: WorkspacePackage } | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null) return null;
  const p = json as Record<string, unknown>;
  if (typeof p.name !== 'string' || p.name === '') return null;
  const exported = exportsMap(p.exports);
  const named = [p.source, p.types, p.typings, ...targetsOf(exported['.']), p.module, p.main].filter((e): e is string => typeof e === 'string');
  const subpaths: WorkspacePackage['subpaths'] = Object.entries(exported)
    .filter(([key]) => key.startsWith('./') && (key.match(/\*/g) ?? []).length <= 1)
    .map(([key, value]) => [key.slice(2), targetsOf(value)]);
  return { name: p.name, pkg: { dir, entries: withSources(dir, named), subpaths } };
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
