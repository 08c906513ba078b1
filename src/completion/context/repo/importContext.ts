import { baseClassesAt, basesOfFound } from './baseClasses';
import { dottedNames, withMembersUsed } from './declarationsOf';
import { type Found, findDeclaration, findImported } from './findDeclaration';
import { receiverClassesAt } from './receiverTypes';
import type { ModuleIndex } from './moduleIndex';
import { resolveImport } from './resolveImport';
import type { ContextSnippet } from './snippet';
import type { SourceLanguage } from './sourceLanguage';

/** The file the cursor is in, as the providers see it. */
export interface CursorFile {
  /** Workspace-relative path with `/` separators. */
  path: string;
  text: string;
  lang: SourceLanguage;
  /** 0-based cursor line. */
  line: number;
}

/** An import statement's first line (also `export … from`, `export {`, `require(`): what the import section is made of. */
export const IMPORT_LINE = /^\s*(import\b|from\s+\S+\s+import\b|export\s*[{*]|export\s.*\bfrom\b|.*\brequire\s*\()/;
/** Lines after an import statement's first line searched for its end: the rest of a multi-line import. */
const IMPORT_TAIL_LINES = 40;

/**
 * The file's import statements alone, each at its own lines (every other line left empty, so line numbers hold),
 * its first line unindented: the imports at a TypeScript/JavaScript file's top, and Python's lazy imports inside
 * functions. The rest of the file is left out: it is what the user is editing, and one unclosed bracket or string
 * there makes the whole module a single ERROR node, or swallows the lazy imports below it.
 */
export function importSection(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let last = -1;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].length >= 1000 || !IMPORT_LINE.test(lines[i])) continue;
    const end = statementEnd(lines, i);
    while (out.length < i) out.push('');
    out.push(lines[i].trimStart(), ...lines.slice(i + 1, end + 1));
    last = end;
    i = end;
  }
  return last < 0 ? '' : out.join('\n');
}

/** The last line of the statement that starts at line `start`: where its brackets close and no `\` continues it. */
function statementEnd(lines: readonly string[], start: number): number {
  const limit = Math.min(lines.length, start + 1 + IMPORT_TAIL_LINES);
  let depth = 0;
  for (let i = start; i < limit; i++) {
    const code = lines[i].replace(/(["'`])(?:\\.|(?!\1).)*\1/g, '""').replace(/(#|\/\/).*$/, '');
    for (const ch of code) {
      if (ch === '(' || ch === '{' || ch === '[') depth++;
      else if ((ch === ')' || ch === '}' || ch === ']') && depth > 0) depth--;
    }
    if (depth === 0 && !code.trimEnd().endsWith('\\')) return i;
  }
  return limit - 1;
}

/** Lines around the cursor whose names count as what the cursor needs. */
const NEAR_LINES = 20;
/** Closeness of a name used on the cursor line or the line next to it (closeness() below). */
const AT_CURSOR = 1 - 0.4 / NEAR_LINES;
/** Imported classes at the cursor whose bases are looked up. */
const MAX_CLASSES_AT_CURSOR = 3;
/** Declarations taken from one file's imports at most (a barrel importing hundreds of names). */
const MAX_SNIPPETS = 64;

/**
 * Repository context from the file's imports, without a language server: each imported name resolved to the
 * workspace file that declares it (following re-exports, `index.ts` and `__init__.py`), and its declaration.
 * Namespace and module imports (`import * as ns`, `import pkg.mod`) give the members the file uses (`ns.name`).
 * Names used near the cursor score highest. Unresolvable imports (packages outside the workspace) give nothing.
 */
export async function importSnippets(file: CursorFile, index: ModuleIndex, signal?: AbortSignal): Promise<ContextSnippet[]> {
  // Only the part of the file that holds its imports is parsed: the parse runs on the extension host's thread.
  const summary = await index.summarize(importSection(file.text), file.lang);
  if (!summary) return [];
  const importLines = new Set(summary.imports.map((r) => r.line));
  const lines = file.text.split('\n').map((l, i) => (importLines.has(i) ? '' : l));
  const body = lines.join('\n');
  const out: ContextSnippet[] = [];
  const seen = new Set<string>();
  let dotted: Set<string> | null = null;
  /** A declaration's text, as a subclass (`asSubclass`) or the outside sees it, with the cut methods the file uses. */
  const summaryText = (found: Found, asSubclass: boolean): string => {
    const d = found.declaration;
    const text = (asSubclass && d.inherited) || d.text;
    if (!d.cutMembers) return text;
    dotted ??= dottedNames(body);
    return withMembersUsed(text, d.cutMembers, dotted, !asSubclass);
  };
  /** Imported declarations used on or next to the cursor line: a member reached through them may be inherited. */
  const atCursor: { found: Found; score: number }[] = [];
  /** `ranked`: a class the cursor's code inherits from, with its score and the view it is shown in. */
  const add = (found: Found | null, local: string, order: number, ranked?: { score: number; asSubclass: boolean }) => {
    if (!found || found.path === file.path) return;
    const key = `${found.path}:${found.declaration.line}`;
    if (seen.has(key) || out.length >= MAX_SNIPPETS) return;
    seen.add(key);
    const used = ranked?.score ?? closeness(lines, local, file.line);
    if (!ranked && used >= AT_CURSOR) atCursor.push({ found, score: used });
    out.push({
      source: 'imports',
      path: found.path,
      text: summaryText(found, ranked?.asSubclass ?? false),
      line: found.declaration.line,
      names: [found.declaration.name],
      score: used - order * 1e-4,
    });
  };
  let order = 0;
  // First the classes the cursor's class extends, as a subclass sees them: what `self.` and `this.` reach.
  for (const { found, depth } of await baseClassesAt(file, summary, index, signal))
    add(found, found.declaration.name, order++, { score: 1.05 - 0.05 * depth, asSubclass: true });
  for (const ref of summary.imports) {
    if (signal?.aborted) break;
    const target = await resolveImport(index.files, file.path, ref, file.lang);
    // Without a target, only a Python namespace package's submodules can still be found (findImported).
    if (!target && file.lang !== 'python') continue;
    for (const name of ref.names) {
      if (name.imported === '*') {
        if (target) for (const member of membersUsed(body, name.local)) add(await findDeclaration(index, target, member), `${name.local}.${member}`, order++);
      } else {
        const found = await findImported(index, file.path, ref, name.imported, file.lang, { target });
        add(found, name.local, order++);
        // `from pkg import mod` (a submodule): also the members the file uses as `mod.member`.
        if (found?.module)
          for (const member of membersUsed(body, name.local)) add(await findDeclaration(index, found.path, member), `${name.local}.${member}`, order++);
      }
    }
    if (ref.star && target) {
      const targetSummary = await index.summary(target);
      for (const [name, declaration] of targetSummary?.declarations ?? []) if (usedIn(body, name)) add({ path: target, declaration }, name, order++);
    }
  }
  // `Name.member` / `Name(...).member` at the cursor, where the member comes from a class Name extends, in a file
  // the cursor's file never imports: those classes, as the outside sees them, just below Name.
  for (const { found, score } of atCursor.slice(0, MAX_CLASSES_AT_CURSOR)) {
    if (signal?.aborted) break;
    for (const base of await basesOfFound(found, file, summary, index, signal))
      add(base.found, base.found.declaration.name, order++, { score: score - 0.1 * base.depth, asSubclass: false });
  }
  return out;
}

/** Score of the class of an object used on the cursor line: what the member being typed belongs to. */
const RECEIVER_SCORE = 1.1;

/**
 * The classes of the objects used on the cursor line (receiverTypes.ts) as the outside sees them (with the cut
 * methods the file uses), and the classes they extend, where an inherited member is declared.
 */
export async function receiverSnippets(file: CursorFile, index: ModuleIndex, signal?: AbortSignal): Promise<ContextSnippet[]> {
  const summary = await index.summarize(importSection(file.text), file.lang);
  if (!summary) return [];
  const dotted = dottedNames(file.text);
  const out: ContextSnippet[] = [];
  const snippet = (found: Found, score: number): ContextSnippet => ({
    source: 'imports',
    path: found.path,
    text: withMembersUsed(found.declaration.text, found.declaration.cutMembers, dotted, true),
    line: found.declaration.line,
    names: [found.declaration.name],
    score,
    atCursor: true,
  });
  for (const found of await receiverClassesAt(file, summary, index, signal)) {
    out.push(snippet(found, RECEIVER_SCORE));
    for (const base of await basesOfFound(found, file, summary, index, signal)) out.push(snippet(base.found, RECEIVER_SCORE - 0.1 * base.depth));
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * How much the cursor likely needs `name`: 1 when it is used on the cursor line, falling with the distance to 0.6
 * at NEAR_LINES; 0.8 when it is imported and not used yet (the code being written is where it will be: on the
 * cross-file set, the truth's name was often used nowhere else in the file); 0.4 when it is used only farther away.
 */
function closeness(lines: readonly string[], name: string, line: number): number {
  const pattern = new RegExp(`(^|[^A-Za-z0-9_$])${escapeRegExp(name)}($|[^A-Za-z0-9_$])`);
  for (let d = 0; d <= NEAR_LINES; d++) {
    if ((line - d >= 0 && pattern.test(lines[line - d])) || (d > 0 && line + d < lines.length && pattern.test(lines[line + d])))
      return 1 - (0.4 * d) / NEAR_LINES;
  }
  return lines.some((l) => pattern.test(l)) ? 0.4 : 0.8;
}

function usedIn(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_$])${escapeRegExp(name)}($|[^A-Za-z0-9_$])`).test(text);
}

/** The members accessed as `local.member` in `text`, in order of first use. */
function membersUsed(text: string, local: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(new RegExp(`(?:^|[^A-Za-z0-9_$.])${escapeRegExp(local)}\\.([A-Za-z_$][A-Za-z0-9_$]*)`, 'g'))) out.add(m[1]);
  return [...out];
}
