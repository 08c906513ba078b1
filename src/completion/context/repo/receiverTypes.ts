import { type BaseClass, basesOfFound, baseClassesAt, enclosingClassLine, importedDeclaration } from './baseClasses';
import { type Declared, declarationOn, isConstructor, returnType } from './declaredTypes';
import { type Found, findDeclaration } from './findDeclaration';
import type { CursorFile } from './importContext';
import type { ModuleIndex, ModuleSummary } from './moduleIndex';

/** Receivers resolved per cursor line at most (each costs a few file reads). */
const MAX_RECEIVERS = 4;
/** Lines above the cursor searched for a local variable's declaration. */
const LOCAL_SCAN_LINES = 150;
/** Base classes searched for a member the class itself does not declare. */
const MAX_BASES = 3;

const NAME = /^[A-Za-z_$][\w$]*$/;
const CHAIN = /(?<![\w$.)\]])((?:[A-Za-z_$][\w$]*\s*\??\.\s*)+)/g;
const OWN = new Set(['self', 'cls', 'this']);

/**
 * The receivers on a line: the names before each member access, `x = self.a.b.c(y.z)` -> `self.a.b`, `y`. The
 * cursor's own object alone (`self.`, `this.`) is left out: its class is the file's, its bases come with the imports.
 */
export function receiverChains(line: string): string[][] {
  if (line.length > 1000) return [];
  const out = new Map<string, string[]>();
  for (const m of line.matchAll(CHAIN)) {
    const names = m[1]
      .split('.')
      .map((n) => n.replace(/\?$/, '').trim())
      .filter((n) => n.length > 0);
    if (names.length === 0 || !names.every((n) => NAME.test(n)) || /^\d/.test(names[0])) continue;
    if (names.length === 1 && OWN.has(names[0])) continue;
    out.set(names.join('.'), names);
  }
  return [...out.values()];
}

/** A class (or interface) and the file its names are resolved in. */
interface ClassAt {
  path: string;
  /** Its whole source (members' bodies included: `self.x = …` lives in `__init__`). */
  lines: string[];
  /** The declaration, when it is in another file than the cursor's (what the prompt gets). */
  found: Found | null;
}

/**
 * The classes of the objects used on the cursor line, from what their declarations say, without a language
 * server: `self.plugins.` -> the class `self.plugins` is annotated or constructed as in the cursor's class
 * (`self.plugins: Optional[finder.Plugins]`), `req.` -> the class the parameter `req` is annotated as, `t.` ->
 * the class `t = make()` returns. Each step follows members through classes in other files. Only classes in
 * workspace files the cursor's file is not come back.
 */
export async function receiverClassesAt(file: CursorFile, summary: ModuleSummary, index: ModuleIndex, signal?: AbortSignal): Promise<Found[]> {
  const lines = file.text.split('\n');
  const out: Found[] = [];
  const seen = new Set<string>();
  const resolver = new Resolver(file, lines, summary, index);
  for (const chain of receiverChains(lines[file.line] ?? '').slice(0, MAX_RECEIVERS)) {
    if (signal?.aborted) break;
    const found = (await resolver.chain(chain))?.found;
    if (!found || found.path === file.path) continue;
    const key = `${found.path}#${found.declaration.name}`;
    if (!seen.has(key)) out.push(found);
    seen.add(key);
  }
  return out;
}

/** A declaration and the line it is on, in the lines it was found in (an alias is looked up above it). */
type Candidate = Declared & { line: number };

/** Aliases followed in a row (`self.a = a`, `a = b`). */
const MAX_ALIASES = 3;
/** Declarations of one name tried, nearest first (one may name what cannot be resolved: a parameter's default). */
const MAX_CANDIDATES = 3;

class Resolver {
  private ownClass: ClassAt | null | undefined;
  private ownBases: Promise<BaseClass[]> | undefined;

  constructor(
    private readonly file: CursorFile,
    private readonly lines: string[],
    private readonly summary: ModuleSummary,
    private readonly index: ModuleIndex,
  ) {}

  async chain([root, ...members]: string[]): Promise<ClassAt | null> {
    // A local (or parameter) is what it was declared as; a name no local declares may be a class (`Name.static`).
    let cls = OWN.has(root)
      ? this.own()
      : ((await this.firstClass(localDeclarations(this.lines, this.file.line, root, this.file.lang), null, this.lines)) ??
        (isConstructor(root) ? await this.resolveType(root, null) : null));
    for (const member of members) {
      if (!cls) return null;
      cls = await this.member(cls, member);
    }
    return cls;
  }

  /** The class of `cls.member`: its declaration in the class, else in the class's bases. */
  private async member(cls: ClassAt, member: string): Promise<ClassAt | null> {
    const own = await this.firstClass(memberDeclarations(cls.lines, member, this.file.lang), cls, cls.lines);
    if (own) return own;
    // The cursor's own class's bases are walked once per gather, however many `self.x.` chains the line has.
    const bases = cls.found ? await basesOfFound(cls.found, this.file, this.summary, this.index) : await this.basesOfOwn();
    for (const base of bases.slice(0, MAX_BASES)) {
      const lines = await this.textOf(base.found);
      if (!lines) continue;
      const inBase = await this.firstClass(memberDeclarations(lines, member, this.file.lang), { path: base.found.path, lines, found: base.found }, lines);
      if (inBase) return inBase;
    }
    return null;
  }

  /** The first of the candidates that leads to a class. `lines`: where they were found (aliases are looked up there). */
  private async firstClass(candidates: Candidate[], scope: ClassAt | null, lines: readonly string[], aliases = 0): Promise<ClassAt | null> {
    for (const c of candidates.slice(0, MAX_CANDIDATES)) {
      if ('alias' in c) {
        if (aliases >= MAX_ALIASES) continue;
        const [resolved, above] = [await this.resolveType(c.alias, scope?.path ?? null), localDeclarations(lines, c.line - 1, c.alias, this.file.lang)];
        const cls = resolved ?? (await this.firstClass(above, scope, lines, aliases + 1));
        if (cls) return cls;
        continue;
      }
      const cls = await this.classOf(c, scope);
      if (cls) return cls;
    }
    return null;
  }

  /** The class a declaration names or a call returns, with names resolved where the declaration is (`scope`; null: the cursor's file). */
  private async classOf(declared: { type: string } | { callee: string }, scope: ClassAt | null): Promise<ClassAt | null> {
    if ('type' in declared) return this.resolveType(declared.type, scope?.path ?? null);
    const [head, ...rest] = declared.callee.split('.');
    // `self.make()`: a method of the class the call is in.
    if (OWN.has(head) && rest.length === 1) {
      const cls = scope ?? this.own();
      const method = cls ? methodText(cls.lines, rest[0], this.file.lang) : null;
      if (method) {
        const type = returnType(method, this.file.lang);
        return type ? this.resolveType(type, cls?.path ?? null) : null;
      }
      // `self.Factory(...)`: a class attribute bound to a class, called to construct one.
      return cls && isConstructor(rest[0]) ? this.member(cls, rest[0]) : null;
    }
    const fn = await this.resolveName(declared.callee, scope?.path ?? null);
    const type = fn ? returnType(fn.declaration.text, this.file.lang) : null;
    return fn && type ? this.resolveType(type, fn.path) : null;
  }

  /** A type's class: declared in `path` (null: the cursor's file) or imported there. */
  private async resolveType(type: string, where: string | null): Promise<ClassAt | null> {
    // The cursor's file is read as the editor has it (unsaved, being typed), through its own imports.
    const path = where === this.file.path ? null : where;
    if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(type)) return null;
    if (path === null && !type.includes('.')) {
      const at = this.lines.findIndex((l) => classLine(l, type));
      if (at >= 0) return { path: this.file.path, lines: classBody(this.lines, at), found: null };
    }
    const found = await this.resolveName(type, path);
    if (!found || found.module || !classLine(firstCodeLine(found.declaration.text), found.declaration.name)) return null;
    const lines = await this.textOf(found);
    return lines ? { path: found.path, lines, found } : null;
  }

  private async resolveName(name: string, where: string | null): Promise<Found | null> {
    const path = where === this.file.path ? null : where;
    if (path === null) return importedDeclaration(this.file, this.summary, this.index, name);
    const [head, ...rest] = name.split('.');
    const found = await findDeclaration(this.index, path, head);
    if (rest.length === 0) return found;
    return found?.module && rest.length === 1 ? findDeclaration(this.index, found.path, rest[0]) : null;
  }

  /** The declaration's whole text in its file (the summary elides bodies). */
  private async textOf(found: Found): Promise<string[] | null> {
    const text = await this.index.files.read(found.path);
    return text === undefined ? null : text.split('\n').slice(found.declaration.line, found.declaration.endLine + 1);
  }

  /** The cursor's own class's bases, walked once per gather however many `self.x.` chains the line has. */
  private basesOfOwn(): Promise<BaseClass[]> {
    this.ownBases ??= baseClassesAt(this.file, this.summary, this.index);
    return this.ownBases;
  }

  private own(): ClassAt | null {
    if (this.ownClass === undefined) {
      const at = enclosingClassLine(this.lines, this.file.line, this.file.lang);
      this.ownClass = at < 0 ? null : { path: this.file.path, lines: classBody(this.lines, at), found: null };
    }
    return this.ownClass;
  }
}

/** Declarations of local `name` above line `line` (and on it), nearest first, within the function it is in. */
function localDeclarations(lines: readonly string[], line: number, name: string, lang: CursorFile['lang']): Candidate[] {
  const out: Candidate[] = [];
  for (let i = line; i >= Math.max(0, line - LOCAL_SCAN_LINES) && out.length < MAX_CANDIDATES; i--) {
    const text = lines[i];
    if (text === undefined || text.length > 1000) continue;
    const declared = declarationOn(text, name, lang);
    if (declared) out.push({ ...declared, line: i });
    // A top-level line other than the cursor's: the function the cursor is in starts here (or was left).
    if (i < line && text.trim() !== '' && !/^\s/.test(text) && !/^[)}\]]/.test(text)) break;
  }
  return out;
}

/**
 * What a class's source declares `member` as: `self.member`/`this.member` anywhere (`__init__`, the constructor),
 * then `member` at the body's level (a field, a parameter property, a class attribute, a property's return type).
 */
function memberDeclarations(lines: readonly string[], member: string, lang: CursorFile['lang']): Candidate[] {
  const bodyIndent = indentOf(lines.slice(1).find((l) => l.trim() !== '') ?? '');
  const own = lang === 'python' ? `self.${member}` : `this.${member}`;
  const onSelf: Candidate[] = [];
  const atBody: Candidate[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.length > 1000 || l.trim() === '') continue;
    const declared = declarationOn(l, own, lang);
    if (declared) onSelf.push({ ...declared, line: i });
    const level = indentOf(l) === bodyIndent;
    const field = level || /\b(?:private|public|protected|readonly)\s/.test(l) ? declarationOn(l, member, lang) : null;
    if (field) atBody.push({ ...field, line: i });
    else if (level && isProperty(lines, i, member, lang)) {
      const type = returnType(lines.slice(i, i + 12).join('\n'), lang);
      if (type) atBody.push({ type, line: i });
    }
  }
  // Annotations first: `self.x: Foo = None` says more than `self.x = make()`.
  const typed = (c: Candidate) => ('type' in c ? 0 : 1);
  return [...onSelf.sort((a, b) => typed(a) - typed(b)), ...atBody.sort((a, b) => typed(a) - typed(b))];
}

/** A property `member` starts at line `i`: `get member()`, or `def member(` under `@property` (or a cached one). */
function isProperty(lines: readonly string[], i: number, member: string, lang: CursorFile['lang']): boolean {
  if (lang !== 'python')
    return new RegExp(`^\\s*(?:(?:public|private|protected|static|override)\\s+)*get\\s+${member.replace(/\$/g, '\\$')}\\s*\\(`).test(lines[i]);
  return new RegExp(`^\\s*(?:async\\s+)?def\\s+${member}\\s*\\(`).test(lines[i]) && /^\s*@\w*(?:\.\w+)*property\b/.test(lines[i - 1] ?? '');
}

/** The text from method `name`'s header (`def name(`, `name(`) on; null when the class has none. */
function methodText(lines: readonly string[], name: string, lang: CursorFile['lang']): string | null {
  const header =
    lang === 'python'
      ? new RegExp(`^\\s*(?:async\\s+)?def\\s+${name}\\s*\\(`)
      : new RegExp(`^\\s*(?:(?:public|private|protected|static|async|override)\\s+)*${name.replace(/\$/g, '\\$')}\\s*(?:<[^>]*>)?\\(`);
  const i = lines.findIndex((l) => header.test(l));
  return i < 0 ? null : lines.slice(i, i + 12).join('\n');
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** A class, interface or type declaration of `name` on this line. */
function classLine(line: string, name: string): boolean {
  const m = /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/.exec(line);
  return m?.[1] === name;
}

function firstCodeLine(text: string): string {
  return (
    text.split('\n').find((l) => /^\s*(?:export\s|default\s|declare\s|abstract\s)*(?:class|interface|type|enum|def|function|const|let|var|async)\b/.test(l)) ??
    ''
  );
}

/** The class at line `at` and its body: the lines below it indented deeper (and a closing brace at its own level). */
function classBody(lines: readonly string[], at: number): string[] {
  const indent = indentOf(lines[at]);
  let end = at + 1;
  for (; end < lines.length; end++) {
    const l = lines[end];
    if (l.trim() === '' || indentOf(l) > indent) continue;
    if (/^\s*[)}\]]/.test(l)) end++;
    break;
  }
  return lines.slice(at, end);
}
