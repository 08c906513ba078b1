import type { Node } from '@vscode/tree-sitter-wasm';
import { topLevel } from './importsOf';
import type { SourceLanguage } from './sourceLanguage';

/** A top-level declaration of a file, as the prompt shows it: its signature, docs and fields, a body only when short. */
export interface Declaration {
  name: string;
  /** 0-based line of its first line (a doc comment or decorator included). */
  line: number;
  /** Last line of the declaration in its file. */
  endLine: number;
  text: string;
  /** A class as its subclasses see it, when that differs from `text` (Python: with its `_protected` methods). */
  inherited?: string;
  /** Methods the summaries left out, cut at MAX_SUMMARY_LINES (Python; the subclass view's, a superset by name). */
  cutMembers?: CutMember[];
}

/** A method a class summary had no room for: shown after all where the code at hand uses it (`withMembersUsed`). */
export interface CutMember {
  name: string;
  text: string;
}

/** Bodies of at most this many lines are shown whole; longer ones are elided. */
const SHORT_BODY_LINES = 6;
/** A class or type summary is cut after this many lines. */
const MAX_SUMMARY_LINES = 60;

/** The top-level declarations of a parsed file by name (`default` for a default export), in file order. */
export function declarationsOf(root: Node, lang: SourceLanguage): Map<string, Declaration> {
  const out = new Map<string, Declaration>();
  for (const c of topLevel(root)) {
    for (const d of lang === 'python' ? pythonModuleDeclarations(c, 0) : scriptDeclarations(c)) if (!out.has(d.name)) out.set(d.name, d);
  }
  return out;
}

/** The declaration whose span holds `line` (a definition a language server pointed at), top level or a class member. */
export function declarationAt(root: Node, lang: SourceLanguage, line: number): Declaration | null {
  for (const d of declarationsOf(root, lang).values()) if (d.line <= line && line <= d.endLine) return narrowToMember(root, lang, d, line);
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// TypeScript / JavaScript

function scriptDeclarations(n: Node): Declaration[] {
  let node = n;
  let lead = leadingComment(n);
  if (n.type === 'export_statement') {
    const decl = n.childForFieldName('declaration');
    if (decl) node = decl;
    else {
      // export default function/class Name ... / export default <expression>
      const value = n.namedChildren.find((c) => c && c.type !== 'comment' && c.type !== 'export_clause' && c.type !== 'string');
      if (!value || !n.text.startsWith('export default')) return [];
      const named = declaredName(value);
      const text = summarizeScript(value, lead, n);
      const first = { name: 'default', line: lead?.startPosition.row ?? n.startPosition.row, endLine: n.endPosition.row, text };
      return named ? [{ ...first, name: named }, first] : [first];
    }
  }
  lead ??= leadingComment(node);
  const line = lead?.startPosition.row ?? n.startPosition.row;
  switch (node.type) {
    case 'class_declaration':
    case 'abstract_class_declaration': {
      const name = declaredName(node);
      const body = node.childForFieldName('body');
      if (!name) return [];
      if (!body || n.endPosition.row - n.startPosition.row + 1 <= SHORT_BODY_LINES + 1)
        return [{ name, line, endLine: n.endPosition.row, text: summarizeScript(node, lead, n) }];
      const { text, cut } = scriptClassSummary(node, lead, n, body);
      return [{ name, line, endLine: n.endPosition.row, text, ...(cut.length > 0 && { cutMembers: cut }) }];
    }
    case 'function_declaration':
    case 'generator_function_declaration':
    case 'function_signature':
    case 'interface_declaration':
    case 'type_alias_declaration':
    case 'enum_declaration':
    case 'module':
    case 'internal_module': {
      const name = declaredName(node);
      return name ? [{ name, line, endLine: n.endPosition.row, text: summarizeScript(node, lead, n) }] : [];
    }
    case 'lexical_declaration':
    case 'variable_declaration': {
      const out: Declaration[] = [];
      for (const d of node.namedChildren) {
        if (d?.type !== 'variable_declarator') continue;
        const nameNode = d.childForFieldName('name');
        if (nameNode?.type !== 'identifier') continue;
        out.push({ name: nameNode.text, line, endLine: n.endPosition.row, text: summarizeVariable(d, lead, n) });
      }
      return out;
    }
    default:
      return [];
  }
}

function declaredName(n: Node): string | null {
  return n.childForFieldName('name')?.text ?? null;
}

/** A `/** ... *\/` or `//` comment that ends on the line right above `n`. */
function leadingComment(n: Node): Node | null {
  const prev = n.previousSibling;
  if (prev?.type === 'comment' && prev.endPosition.row >= n.startPosition.row - 1) return prev;
  return null;
}

function textFrom(lead: Node | null, body: string): string {
  return lead ? `${lead.text}\n${body}` : body;
}

/** The text of `outer` (the node with `export`) up to where `inner`'s child `bodyField` starts. */
function headOf(outer: Node, _inner: Node, body: Node | null): string {
  if (!body) return outer.text;
  return outer.text.slice(0, body.startIndex - outer.startIndex).trimEnd();
}

function summarizeScript(node: Node, lead: Node | null, outer: Node): string {
  const body = node.childForFieldName('body');
  const lines = outer.endPosition.row - outer.startPosition.row + 1;
  if (!body || lines <= SHORT_BODY_LINES + 1) return textFrom(lead, capLines(outer.text));
  if (node.type === 'class_declaration' || node.type === 'abstract_class_declaration') return scriptClassSummary(node, lead, outer, body).text;
  if (node.type === 'function_declaration' || node.type === 'generator_function_declaration') return textFrom(lead, `${headOf(outer, node, body)} { … }`);
  // Interfaces, enums, type aliases, namespaces: their members are the declaration.
  return textFrom(lead, capLines(outer.text));
}

/**
 * A class's head and its non-private members, long bodies elided. The members' doc comments go when they would
 * push members out of the summary: a class's member list is what `obj.` needs. Members past the cut come back in
 * `cut`, for withMembersUsed.
 */
function scriptClassSummary(node: Node, lead: Node | null, outer: Node, body: Node): { text: string; cut: CutMember[] } {
  const members: { name: string; doc: string | null; text: string }[] = [];
  for (const m of body.namedChildren) {
    if (!m || m.type === 'comment') continue;
    if (/^(private|#)/.test(m.text) || m.childForFieldName('name')?.type === 'private_property_identifier') continue;
    if (m.namedChildren.some((c) => c?.type === 'accessibility_modifier' && c.text === 'private')) continue;
    const mBody = m.childForFieldName('body');
    const short = m.endPosition.row - m.startPosition.row + 1 <= SHORT_BODY_LINES;
    const doc = leadingComment(m);
    const pad = ' '.repeat(m.startPosition.column);
    members.push({ name: declaredName(m) ?? '', doc: doc ? pad + doc.text : null, text: pad + (!mBody || short ? m.text : `${headOf(m, m, mBody)} { … }`) });
  }
  const head = textFrom(lead, `${headOf(outer, node, body)} {`);
  const compose = (docs: boolean) => [head, ...members.map((m) => (docs && m.doc ? `${m.doc}\n${m.text}` : m.text)), '}'].join('\n');
  const withDocs = compose(true);
  if (withDocs.split('\n').length <= MAX_SUMMARY_LINES) return { text: withDocs, cut: [] };
  let at = head.split('\n').length;
  const cut: CutMember[] = [];
  for (const m of members) {
    if (at >= MAX_SUMMARY_LINES && m.name) cut.push({ name: m.name, text: m.text });
    at += m.text.split('\n').length;
  }
  return { text: capLines(compose(false)), cut };
}

function summarizeVariable(d: Node, lead: Node | null, outer: Node): string {
  const lines = outer.endPosition.row - outer.startPosition.row + 1;
  if (lines <= SHORT_BODY_LINES) return textFrom(lead, outer.text);
  const value = d.childForFieldName('value');
  const fnBody =
    value && (value.type === 'arrow_function' || value.type === 'function_expression' || value.type === 'function') ? value.childForFieldName('body') : null;
  if (fnBody) return textFrom(lead, `${outer.text.slice(0, fnBody.startIndex - outer.startIndex).trimEnd()} { … }`);
  return textFrom(lead, capLines(outer.text, 12));
}

// ---------------------------------------------------------------------------------------------------------
// Python

/** Module-level blocks whose names Python binds in the module: `if PY3:` / `try: … except ImportError:` / `with`. */
const PYTHON_MODULE_BLOCKS = /^(if_statement|try_statement|with_statement|else_clause|elif_clause|except_clause|finally_clause|block)$/;
/** How deep such blocks are searched. */
const MAX_BLOCK_DEPTH = 3;

/**
 * The declarations of a module-level statement, also those inside the conditional blocks compatibility modules
 * are made of (`try: unicode = unicode` / `except NameError: unicode = str`): the first one is what the prompt shows.
 */
function pythonModuleDeclarations(n: Node, depth: number): Declaration[] {
  if (!PYTHON_MODULE_BLOCKS.test(n.type)) return pythonDeclarations(n);
  if (depth >= MAX_BLOCK_DEPTH) return [];
  return n.namedChildren.flatMap((c) => (c ? pythonModuleDeclarations(c, depth + 1) : []));
}

function pythonDeclarations(n: Node): Declaration[] {
  let node = n;
  if (n.type === 'decorated_definition') node = n.childForFieldName('definition') ?? n;
  const line = n.startPosition.row;
  if (node.type === 'function_definition' || node.type === 'class_definition') {
    const name = declaredName(node);
    if (!name) return [];
    const { text } = summarizePython(node, n, false);
    const sub = node.type === 'class_definition' ? summarizePython(node, n, true) : { text, cut: [] };
    const inherited = sub.text;
    return [{ name, line, endLine: n.endPosition.row, text, ...(inherited !== text && { inherited }), ...(sub.cut.length > 0 && { cutMembers: sub.cut }) }];
  }
  if (n.type === 'expression_statement') {
    const a = n.namedChildren[0];
    if (a?.type !== 'assignment') return [];
    const left = a.childForFieldName('left');
    if (left?.type !== 'identifier') return [];
    return [{ name: left.text, line, endLine: n.endPosition.row, text: capLines(n.text, 4) }];
  }
  return [];
}

function docstringOf(body: Node | null): Node | null {
  const first = body?.namedChildren[0];
  if (first?.type === 'expression_statement' && first.namedChildren[0]?.type === 'string') return first;
  return null;
}

/**
 * A function's signature and docstring, or a class's docstring, fields and method signatures: its public ones, or
 * with `protectedToo` also the `_protected` ones a subclass calls (never name-mangled `__private` ones or dunders
 * other than `__init__` and `__call__`).
 */
function summarizePython(node: Node, outer: Node, protectedToo: boolean): { text: string; cut: CutMember[] } {
  const body = node.childForFieldName('body');
  const lines = outer.endPosition.row - outer.startPosition.row + 1;
  if (!body || lines <= SHORT_BODY_LINES + 1) return { text: capLines(outer.text), cut: [] };
  const head = outer.text.slice(0, body.startIndex - outer.startIndex).trimEnd();
  const indent = ' '.repeat(body.startPosition.column);
  const doc = docstringOf(body);
  const parts = [head];
  if (doc) parts.push(indent + doc.text);
  if (node.type === 'function_definition') {
    parts.push(`${indent}...`);
    return { text: parts.join('\n'), cut: [] };
  }
  /** The methods, with the line of the summary each starts at. */
  const methods: (CutMember & { at: number })[] = [];
  let at = parts.join('\n').split('\n').length;
  for (const m of body.namedChildren) {
    if (!m || m === doc || m.id === doc?.id || m.type === 'comment') continue;
    const def = m.type === 'decorated_definition' ? m.childForFieldName('definition') : m;
    if (def?.type === 'function_definition') {
      const name = declaredName(def) ?? '';
      if (name.startsWith(protectedToo ? '__' : '_') && name !== '__init__' && name !== '__call__') continue;
      // `__init__` shows the fields it sets; other methods their signature, one line each (`def f(self) -> T: ...`),
      // so a class of 40 methods still fits the summary.
      const fBody = def.childForFieldName('body');
      const init = name === '__init__' && m.endPosition.row - m.startPosition.row + 1 <= SHORT_BODY_LINES + 6;
      const text = init || !fBody ? m.text : `${m.text.slice(0, fBody.startIndex - m.startIndex).trimEnd()} ...`;
      parts.push(indent + text);
      methods.push({ name, text: indent + text, at });
      at += text.split('\n').length;
    } else if (m.type === 'expression_statement' || def?.type === 'class_definition') {
      const text = capLines(m.text, 4);
      parts.push(indent + text);
      at += text.split('\n').length;
    }
  }
  return { text: capLines(parts.join('\n')), cut: methods.filter((m) => m.at >= MAX_SUMMARY_LINES).map(({ name, text }) => ({ name, text })) };
}

/** Cut methods added after all: at most this many. */
const MAX_MEMBERS_USED = 12;

/** The names the code reaches with a dot (`self.name(`, `obj.name`), for withMembersUsed. */
export function dottedNames(code: string): Set<string> {
  return new Set(Array.from(code.matchAll(/\.([A-Za-z_]\w*)/g), (m) => m[1]));
}

/**
 * A class summary with the methods it had no room for that the code at hand uses (`dotted`: dottedNames), put back
 * before its `…`: of a class of 150 methods, the ones the file calls. `publicOnly` leaves out `_protected` ones,
 * as the class's outside view does.
 */
export function withMembersUsed(text: string, cut: readonly CutMember[] | undefined, dotted: ReadonlySet<string>, publicOnly: boolean): string {
  if (!cut || cut.length === 0 || !text.endsWith('\n…')) return text;
  const used = cut
    .filter((m) => !(publicOnly && m.name.startsWith('_') && m.name !== '__init__' && m.name !== '__call__'))
    .filter((m) => dotted.has(m.name) && !text.includes(m.text))
    .slice(0, MAX_MEMBERS_USED);
  return used.length === 0 ? text : `${text.slice(0, -2)}\n${used.map((m) => m.text).join('\n')}\n…`;
}

// ---------------------------------------------------------------------------------------------------------

/** A class member's declaration when `line` falls inside one (a language server pointed at a method). */
function narrowToMember(root: Node, lang: SourceLanguage, d: Declaration, line: number): Declaration {
  if (line === d.line) return d;
  let node: Node | null = root.descendantForPosition({ row: line, column: 0 }, { row: line, column: 10_000 });
  while (node?.parent && node.parent.type !== (lang === 'python' ? 'module' : 'program')) {
    const t = node.type;
    if (t === 'method_definition' || t === 'function_definition' || t === 'public_field_definition' || t === 'method_signature') {
      const name = declaredName(node);
      const owner = node.parent?.parent;
      if (name && owner && owner.type !== 'module' && owner.type !== 'program') {
        const head = owner.text.slice(0, (owner.childForFieldName('body')?.startIndex ?? owner.startIndex) - owner.startIndex).trimEnd();
        const body = node.childForFieldName('body');
        const short = node.endPosition.row - node.startPosition.row + 1 <= SHORT_BODY_LINES;
        const member =
          short || !body ? node.text : `${node.text.slice(0, body.startIndex - node.startIndex).trimEnd()}${lang === 'python' ? '\n        ...' : ' { … }'}`;
        const text = lang === 'python' ? `${head}\n    ${member}` : `${head} {\n  ${member}\n}`;
        return { name, line: node.startPosition.row, endLine: node.endPosition.row, text };
      }
    }
    node = node.parent;
  }
  return d;
}

function capLines(text: string, max = MAX_SUMMARY_LINES): string {
  const lines = text.split('\n');
  return lines.length <= max ? text : `${lines.slice(0, max).join('\n')}\n…`;
}
