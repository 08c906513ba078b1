import type { Declaration } from './declarationsOf';
import type { ImportRef } from './importsOf';
import type { ModuleIndex } from './moduleIndex';
import { resolveImport, resolvePythonSubmodule } from './resolveImport';
import type { SourceLanguage } from './sourceLanguage';

/** How far re-exports (`export * from`, `__init__.py`) are followed. */
const MAX_HOPS = 4;

/** A declaration and the workspace file it is in. */
export interface Found {
  path: string;
  declaration: Declaration;
  /** The name is a module (a Python submodule): `declaration` is its overview. */
  module?: boolean;
}

/** Where `name` is declared, starting at module `path` and following what it imports or re-exports under that name. */
export async function findDeclaration(index: ModuleIndex, path: string, name: string, hops = 0, visited = new Set<string>()): Promise<Found | null> {
  const key = `${path}#${name}`;
  if (hops > MAX_HOPS || visited.has(key)) return null;
  visited.add(key);
  const summary = await index.summary(path);
  if (!summary) return null;
  const own = summary.declarations.get(name);
  if (own) return { path, declaration: own };
  for (const ref of summary.imports) {
    const via = passesOn(ref, name, summary.lang);
    if (via === null) continue;
    const found = await findImported(index, path, ref, via, summary.lang, { hops: hops + 1, visited });
    if (found) return found;
  }
  // `from pkg import mod`: a submodule of the package is a module, shown by its declarations' summary.
  if (summary.lang === 'python') {
    const sub = await resolvePythonSubmodule(index.files, path, name);
    const subSummary = sub ? await index.summary(sub) : null;
    if (sub && subSummary) return { path: sub, declaration: moduleOverview(name, subSummary.declarations), module: true };
  }
  return null;
}

/**
 * What `name`, imported by `ref` into file `from`, is: its declaration in the module the import resolves to
 * (`target`, when the caller has resolved it already). Python's `from pkg import name` where `pkg` has no
 * `__init__.py` (a namespace package, PEP 420: no file to resolve the import to) gives the submodule `pkg/name.py`,
 * shown by its declarations' summary.
 */
export async function findImported(
  index: ModuleIndex,
  from: string,
  ref: Pick<ImportRef, 'specifier'>,
  name: string,
  lang: SourceLanguage,
  via: { target?: string | null; hops?: number; visited?: Set<string> } = {},
): Promise<Found | null> {
  const target = via.target !== undefined ? via.target : await resolveImport(index.files, from, ref, lang);
  if (target) return findDeclaration(index, target, name, via.hops, via.visited);
  if (lang !== 'python') return null;
  const specifier = ref.specifier.endsWith('.') ? `${ref.specifier}${name}` : `${ref.specifier}.${name}`;
  const sub = await resolveImport(index.files, from, { specifier }, 'python');
  const summary = sub ? await index.summary(sub) : null;
  return sub && summary ? { path: sub, declaration: moduleOverview(name, summary.declarations), module: true } : null;
}

/** The name under which `ref` passes `name` on from its module, or null. Python binds every import in the module's namespace. */
function passesOn(ref: ImportRef, name: string, lang: SourceLanguage): string | null {
  if (lang !== 'python' && !ref.reexport) {
    // `import { x } from './a'; export { x }` is also a re-export; a plain import found here is the best lead there is.
    const plain = ref.names.find((n) => n.local === name && n.imported !== '*');
    return plain ? plain.imported : null;
  }
  const named = ref.names.find((n) => n.local === name && n.imported !== '*');
  if (named) return named.imported;
  return ref.star ? name : null;
}

const OVERVIEW_DECLARATIONS = 40;

function moduleOverview(name: string, declarations: Map<string, Declaration>): Declaration {
  // Each declaration's first line of code: its signature (past doc comments and decorators).
  const firstLines = [...declarations.values()]
    .slice(0, OVERVIEW_DECLARATIONS)
    .map((d) => d.text.split('\n').find((l) => /^\s*[A-Za-z_$]/.test(l) && !/^\s*(\/\/|\*)/.test(l)) ?? '');
  return { name, line: 0, endLine: 0, text: firstLines.join('\n') };
}
