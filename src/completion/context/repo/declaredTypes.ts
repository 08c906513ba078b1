import type { SourceLanguage } from './sourceLanguage';

/**
 * Reading declared types from source text, without a type checker: what a variable, a parameter or a member was
 * declared or constructed as (`x: Foo`, `self.x: Optional[Foo]`, `x = Foo(...)`, `this.x = new Foo()`,
 * `constructor(private x: Foo)`), and what a function says it returns. Text patterns, not a parse: the cursor's
 * file rarely parses while it is being typed.
 */

const NAME = '[A-Za-z_$][\\w$]*';

/** Wrappers whose value is not the wrapped type's object (a list of Foo has no Foo members). */
const CONTAINERS = new Set([
  'list',
  'List',
  'dict',
  'Dict',
  'set',
  'Set',
  'tuple',
  'Tuple',
  'Sequence',
  'Iterable',
  'Iterator',
  'Mapping',
  'Callable',
  'Type',
  'type',
  'Array',
  'ReadonlyArray',
  'Map',
  'Record',
  'Promise',
  'Partial',
  'Readonly',
  'Awaitable',
  'Generator',
]);
/** Python's and TypeScript's builtin and primitive types: nothing in the workspace declares them. */
const BUILTINS = new Set([
  'str',
  'int',
  'float',
  'bool',
  'bytes',
  'object',
  'Any',
  'None',
  'string',
  'number',
  'boolean',
  'any',
  'unknown',
  'void',
  'never',
  'object',
  'undefined',
  'null',
  'Object',
  'Function',
  'Date',
  'Error',
  'RegExp',
]);

/** Splits at `sep` outside brackets: `A[B, C] | None` at `|` -> `A[B, C]`, `None`. */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '[' || ch === '<' || ch === '(') depth++;
    else if (ch === ']' || ch === '>' || ch === ')') depth--;
    else if (ch === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

/**
 * The one class a type annotation names (`Optional[pkg.Foo]`, `Foo | None`, `"Foo"`, `Foo<T>`, `Foo[T]` ->
 * `pkg.Foo` / `Foo`), or null for a builtin, a container, a union of several classes or what does not read as a
 * type.
 */
export function namedType(annotation: string): string | null {
  let t = annotation.trim().replace(/^["'`]|["'`]$/g, '');
  for (let i = 0; i < 4; i++) {
    const wrapped = /^(?:typing\.)?(?:Optional|Union|ClassVar|Final|Annotated)\[(.*)\]$/.exec(t);
    if (!wrapped) break;
    const inner = splitTop(wrapped[1], ',');
    t = (t.includes('Annotated[') ? inner.slice(0, 1) : inner.filter((p) => !/^None$/.test(p))).join(' | ');
  }
  const parts = splitTop(t, '|').filter((p) => !/^(None|null|undefined)$/.test(p));
  if (parts.length !== 1 || parts[0].endsWith('[]')) return null;
  const m = new RegExp(`^((?:${NAME}\\.)*${NAME})\\s*(?:[[<].*[\\]>])?$`).exec(parts[0].replace(/^["'`]|["'`]$/g, ''));
  if (!m) return null;
  const last = m[1].slice(m[1].lastIndexOf('.') + 1);
  return CONTAINERS.has(last) || BUILTINS.has(last) ? null : m[1];
}

function escapeName(name: string): string {
  return name.replace(/\$/g, '\\$');
}

/**
 * What a line says `target` (`x`, `self.x`, `this.x`) is: a type, the callee whose value it holds, or the local
 * variable it was assigned from (`self.machine = machine`, typed where that one is).
 */
export type Declared = { type: string } | { callee: string } | { alias: string };

/** Callees whose last name is CapWords construct that class (`Foo(...)`, `pkg.Foo(...)`, `new Foo(...)`). */
export function isConstructor(callee: string): boolean {
  return /^[A-Z]/.test(callee.slice(callee.lastIndexOf('.') + 1));
}

/**
 * What `line` declares `target` as: an annotation (`target: T`, a parameter `(…, target: T, …)`, a TypeScript
 * field or parameter property), a construction (`target = T(...)`, `target = new T(...)`), a call's value
 * (`target = make(...)`, `target = await make(...)`), or a class it is bound to (`Target = Foo`). Null otherwise.
 */
export function declarationOn(line: string, target: string, lang: SourceLanguage): Declared | null {
  const { annotated, assigned } = patternsFor(target, lang);
  const annotation = annotated.exec(line);
  if (annotation && !/^\s*(?:case|default)\b/.test(line)) {
    const type = namedType(typeUntilEnd(line.slice(annotation.index + annotation[0].length)));
    if (type) return { type };
  }
  const value = assigned.exec(line);
  if (!value) return docstringType(line, target);
  const callee = value[2].replace(/\s+/g, '');
  if (value[3] === '(' || value[3] === '<') return value[1] || isConstructor(callee) ? { type: callee } : { callee };
  if (/^(?:None|null|undefined|true|false|True|False|self|this)$/.test(callee)) return null;
  // `Target = Foo`: bound to a class, which is what `Target.member` reaches; `x = y`: whatever `y` is.
  return callee.includes('.') ? null : { alias: callee };
}

/** The patterns for one target, compiled once: a class's lines are each tried against the same few members. */
const compiled = new Map<string, { annotated: RegExp; assigned: RegExp }>();

function patternsFor(target: string, lang: SourceLanguage): { annotated: RegExp; assigned: RegExp } {
  const key = `${lang}\0${target}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  const t = target.split('.').map(escapeName).join('\\s*\\.\\s*');
  const modifiers = lang === 'python' ? '' : '(?:(?:public|private|protected|readonly|static|declare|override|abstract|const|let|var)\\s+)*#?';
  const patterns = {
    annotated: new RegExp(`(?:^|[(,]|\\s)${modifiers}${t}\\s*[?!]?\\s*:(?!:)`),
    assigned: new RegExp(`(?:^|[^\\w$.])${modifiers}${t}\\s*=(?!=)\\s*(?:await\\s+)?(new\\s+)?((?:${NAME}\\s*\\.\\s*)*${NAME})\\s*(\\(|<|$|;|#|//)`),
  };
  if (compiled.size >= 256) compiled.clear();
  compiled.set(key, patterns);
  return patterns;
}

/** A type annotation as written, up to where it ends: a top-level `=`, `,`, `)`, `;`, `{`, or a comment. */
function typeUntilEnd(rest: string): string {
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i];
    if (ch === '[' || ch === '<' || ch === '(') depth++;
    else if ((ch === ']' || ch === '>' || ch === ')') && depth > 0) depth--;
    else if (depth === 0 && ('=,);{#'.includes(ch) || rest.startsWith('//', i))) return rest.slice(0, i);
  }
  return rest;
}

/**
 * A type a documentation comment gives `name`: Google style (`name (Type): …`, `name (Type, optional)`), Sphinx
 * (`:type name: Type`, `:param Type name:`) and JSDoc (`@param {Type} name`, `@type {Type}` is not tied to a name).
 */
function docstringType(line: string, name: string): Declared | null {
  if (name.includes('.')) return null;
  const n = escapeName(name);
  const m =
    new RegExp(`^\\s*\\*?\\s*${n}\\s*\\(([^),]+)(?:,[^)]*)?\\)\\s*:`).exec(line) ??
    new RegExp(`:type\\s+${n}\\s*:\\s*(.+)$`).exec(line) ??
    new RegExp(`:param\\s+(\\S+)\\s+${n}\\s*:`).exec(line) ??
    new RegExp(`@param\\s+\\{([^}]+)\\}\\s+\\[?${n}\\b`).exec(line);
  const type = m ? namedType(m[1]) : null;
  return type ? { type } : null;
}

/** The return annotation of the function or method whose declaration starts `text` (`-> T:`, `): T {`). */
export function returnType(text: string, lang: SourceLanguage): string | null {
  const lines = text.split('\n');
  // Past its doc comment and decorators, whose examples hold calls of their own.
  const start = Math.max(
    0,
    lines.findIndex((l) => /^\s*[A-Za-z_$]/.test(l) && !/^\s*(?:\*|\/\/|#|@)/.test(l)),
  );
  const head = lines.slice(start, start + 12).join(' ');
  const m = lang === 'python' ? /\)\s*->\s*(.+?)\s*:(?:\s|$)/.exec(head) : /\)\s*:\s*([^{;=]+?)\s*(?:\{|;|=>|$)/.exec(head);
  return m ? namedType(m[1]) : null;
}
