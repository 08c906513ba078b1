import { type Found, findDeclaration, findImported } from './findDeclaration';
import type { CursorFile } from './importContext';
import type { ModuleIndex, ModuleSummary } from './moduleIndex';
import { resolveImport } from './resolveImport';
import type { SourceLanguage } from './sourceLanguage';

/** Levels of inheritance followed (the cursor's class's bases are level 1). */
const MAX_DEPTH = 3;
/** Base classes returned at most (multiple inheritance, mixins). */
const MAX_BASES = 6;
/** Lines above the cursor searched for the class it is in. */
const MAX_SCAN_LINES = 3000;
/** Lines a class header may span (a base list over several lines). */
const HEADER_LINES = 10;

/** A class the cursor's class inherits from, in another workspace file, and how many levels up it is. */
export interface BaseClass {
  found: Found;
  depth: number;
}

/**
 * The classes the cursor's class extends, found without a language server: the class whose body holds the cursor
 * (by indentation, so it works while the code does not parse), its bases resolved through the file's imports (or
 * declared in the file itself), then each base's own bases in its file. These are what `self.`/`this.` and
 * `super()` reach, and a file rarely imports them itself.
 */
export async function baseClassesAt(file: CursorFile, summary: ModuleSummary, index: ModuleIndex, signal?: AbortSignal): Promise<BaseClass[]> {
  const own = enclosingClass(file.text.split('\n'), file.line, file.lang);
  if (!own) return [];
  return walkBases(
    own.bases.map((name) => ({ name, path: null, depth: 1 })),
    new Set<string>([`${file.path}#${own.name}`]),
    file,
    summary,
    index,
    signal,
  );
}

/**
 * The classes a class found in a workspace file extends (what `Name.member` reaches when the member is inherited),
 * each with its depth; empty when `found` is not a class.
 */
export async function basesOfFound(found: Found, file: CursorFile, summary: ModuleSummary, index: ModuleIndex, signal?: AbortSignal): Promise<BaseClass[]> {
  const header = classHeader(found.declaration.text.split('\n'), -1, file.lang);
  if (!header) return [];
  const queue = header.bases.filter((b) => !b.includes('.')).map((name) => ({ name, path: found.path, depth: 1 }));
  return walkBases(queue, new Set([`${found.path}#${found.declaration.name}`]), file, summary, index, signal);
}

/** Names still to find: a name is looked up in the cursor file (`path` null) or in the workspace file that holds it. */
type BaseQueue = { name: string; path: string | null; depth: number }[];

async function walkBases(
  queue: BaseQueue,
  seen: Set<string>,
  file: CursorFile,
  summary: ModuleSummary,
  index: ModuleIndex,
  signal?: AbortSignal,
): Promise<BaseClass[]> {
  let lines: string[] | null = null;
  const out: BaseClass[] = [];
  while (queue.length > 0 && out.length < MAX_BASES && !signal?.aborted) {
    const { name, path, depth } = queue.shift() as (typeof queue)[number];
    if (path === null) {
      // A base declared in the cursor file itself: its own bases, one level up.
      lines ??= file.text.split('\n');
      const at = lines.findIndex((l) => declaresClass(l, name));
      const local = at >= 0 ? classHeader(lines, at, file.lang) : null;
      if (local && !seen.has(`${file.path}#${name}`)) {
        seen.add(`${file.path}#${name}`);
        if (depth < MAX_DEPTH) queue.push(...local.bases.map((b) => ({ name: b, path: null, depth: depth + 1 })));
        continue;
      }
    }
    const found = path === null ? await importedDeclaration(file, summary, index, name) : await findDeclaration(index, path, name);
    if (!found || found.module || found.path === file.path) continue;
    const key = `${found.path}#${found.declaration.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const header = classHeader(found.declaration.text.split('\n'), -1, file.lang);
    if (!header) continue; // a mixin factory or another function: not a class
    out.push({ found, depth });
    if (depth < MAX_DEPTH) queue.push(...header.bases.filter((b) => !b.includes('.')).map((b) => ({ name: b, path: found.path, depth: depth + 1 })));
  }
  return out;
}

/** Where the cursor file's import of `name` (`Base`, or `module.Base`) leads. */
export async function importedDeclaration(file: CursorFile, summary: ModuleSummary, index: ModuleIndex, name: string): Promise<Found | null> {
  const [head, ...rest] = name.split('.');
  for (const ref of summary.imports) {
    const bound = ref.names.find((n) => n.local === head);
    if (!bound) continue;
    const target = await resolveImport(index.files, file.path, ref, file.lang);
    // `import pkg.mod as m` / `import * as m` then `m.Base`; otherwise the imported name itself.
    if (bound.imported === '*') return target && rest.length === 1 ? findDeclaration(index, target, rest[0]) : null;
    const found = await findImported(index, file.path, ref, bound.imported, file.lang, { target });
    if (!found && !target) continue;
    return found?.module && rest.length === 1 ? findDeclaration(index, found.path, rest[0]) : rest.length === 0 ? found : null;
  }
  return null;
}

interface ClassHeader {
  name: string;
  bases: string[];
}

const PYTHON_CLASS = /^\s*class\s+([A-Za-z_]\w*)/;
const SCRIPT_CLASS = /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/;

function declaresClass(line: string, name: string): boolean {
  const m = PYTHON_CLASS.exec(line) ?? SCRIPT_CLASS.exec(line);
  return m?.[1] === name;
}

/**
 * The class whose body holds line `line`: the nearest line above with less indentation than everything between,
 * if it is a class header. A top-level line that is not one (a function, a closing brace) ends the search.
 */
export function enclosingClass(lines: readonly string[], line: number, lang: SourceLanguage): ClassHeader | null {
  const at = enclosingClassLine(lines, line, lang);
  return at < 0 ? null : classHeader(lines, at, lang);
}

/** The line of the header of the class whose body holds line `line` (see enclosingClass), or -1. */
export function enclosingClassLine(lines: readonly string[], line: number, lang: SourceLanguage): number {
  const cursor = lines[line] ?? '';
  let limit = cursor.trim() === '' ? cursor.length : cursor.length - cursor.trimStart().length;
  for (let i = line - 1; i >= Math.max(0, line - MAX_SCAN_LINES); i--) {
    const l = lines[i];
    if (l.trim() === '' || l.length > 1000) continue;
    const indent = l.length - l.trimStart().length;
    if (indent >= limit) continue;
    limit = indent;
    if (classHeader(lines, i, lang)) return i;
    if (indent === 0) return -1;
  }
  return -1;
}

/** The name and base classes of the class header at line `at` (-1: the first header in `lines`), or null. */
function classHeader(lines: readonly string[], at: number, lang: SourceLanguage): ClassHeader | null {
  const pattern = lang === 'python' ? PYTHON_CLASS : SCRIPT_CLASS;
  const start = at >= 0 ? at : lines.findIndex((l) => pattern.test(l));
  if (start < 0 || !pattern.test(lines[start] ?? '')) return null;
  const text = lines.slice(start, start + HEADER_LINES).join('\n');
  const m = pattern.exec(text) as RegExpExecArray;
  const after = text.slice(m.index + m[0].length);
  return { name: m[1], bases: lang === 'python' ? pythonBases(after) : scriptBase(after) };
}

/** `(A, pkg.B, Generic[T], metaclass=M):` -> A, pkg.B, Generic. */
function pythonBases(after: string): string[] {
  let list = /^\s*(?:\[[^\]]*\])?\s*\(([^)]*)\)/.exec(after)?.[1] ?? '';
  // Subscripts hold commas of their own: `Mapping[str, int]`.
  for (let i = 0; i < 4 && /\[[^[\]]*\]/.test(list); i++) list = list.replace(/\[[^[\]]*\]/g, '');
  return list
    .split(',')
    .map((b) => b.trim())
    .filter((b) => /^[A-Za-z_][\w.]*$/.test(b));
}

/** `<T extends X> extends Base<T> implements I {` -> Base. */
function scriptBase(after: string): string[] {
  let rest = after.trimStart();
  // The class's own type parameters, which may say `extends` themselves.
  if (rest.startsWith('<')) {
    let depth = 0;
    let i = 0;
    for (; i < rest.length; i++) {
      if (rest[i] === '<') depth++;
      else if (rest[i] === '>' && --depth === 0) break;
    }
    rest = rest.slice(i + 1);
  }
  const m = /^\s*extends\s+([A-Za-z_$][\w$.]*)/.exec(rest);
  return m ? [m[1]] : [];
}
