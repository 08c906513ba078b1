import type { Node } from '@vscode/tree-sitter-wasm';
import type { SourceLanguage } from './sourceLanguage';

/** One name an import brings in: `imported` is `*` for a whole module (namespace, `import a.b`), `default` for a default import. */
export interface ImportedName {
  imported: string;
  local: string;
}

/**
 * An import or re-export of a file, as written: `./x`, `../y/index.js`, `pkg/mod` (scripts); `.models`, `..`,
 * `pkg.sub` (Python: leading dots are relative levels).
 */
export interface ImportRef {
  specifier: string;
  names: ImportedName[];
  /** `export ... from` (scripts) or a Python `__init__.py` import: the names are passed on to importers. */
  reexport: boolean;
  /** `export * from` / `from x import *`. */
  star: boolean;
  line: number;
}

/** Python statements searched for imports at most: lazy imports inside functions count, a huge file costs a bound. */
const MAX_PYTHON_NODES = 20_000;

/**
 * The imports and re-exports of a parsed file, in file order: the top level for TypeScript/JavaScript; anywhere
 * for Python (conditional `if TYPE_CHECKING:` / `try:` imports, and the lazy imports inside functions that
 * Python code uses to avoid import cycles).
 */
export function importsOf(root: Node, lang: SourceLanguage): ImportRef[] {
  const out: ImportRef[] = [];
  if (lang !== 'python') {
    for (const c of topLevel(root)) scriptImport(c, out);
    return out;
  }
  let visited = 0;
  const visit = (n: Node) => {
    for (const c of n.namedChildren) {
      if (!c || ++visited > MAX_PYTHON_NODES) return;
      if (c.type === 'import_statement' || c.type === 'import_from_statement') pythonImport(c, out);
      else if (/statement|clause|block|definition/.test(c.type) || c.type === 'ERROR') visit(c);
    }
  };
  visit(root);
  return out;
}

/**
 * The top-level statements of a tree, also those tree-sitter put inside an ERROR node. A file being edited
 * rarely parses: one unclosed bracket can make the whole module a single ERROR whose children are the
 * statements that did parse.
 */
export function topLevel(root: Node): Node[] {
  const out: Node[] = [];
  const walk = (n: Node, depth: number) => {
    for (const c of n.namedChildren) {
      if (!c) continue;
      if (c.type === 'ERROR' && depth < MAX_ERROR_DEPTH) walk(c, depth + 1);
      else out.push(c);
    }
  };
  walk(root, 0);
  return out;
}

/** ERROR nodes nested deeper than this are not searched (a pathological file costs a bound). */
const MAX_ERROR_DEPTH = 4;

function unquote(n: Node | null): string | null {
  if (!n) return null;
  const t = n.text;
  return t.length >= 2 ? t.slice(1, -1) : null;
}

function scriptImport(n: Node, out: ImportRef[]): void {
  const line = n.startPosition.row;
  if (n.type === 'import_statement') {
    const specifier = unquote(n.childForFieldName('source'));
    if (specifier === null) return;
    const names: ImportedName[] = [];
    const clause = n.namedChildren.find((c) => c?.type === 'import_clause');
    for (const c of clause?.namedChildren ?? []) {
      if (!c) continue;
      if (c.type === 'identifier') names.push({ imported: 'default', local: c.text });
      else if (c.type === 'namespace_import') {
        const id = c.namedChildren.find((x) => x?.type === 'identifier');
        if (id) names.push({ imported: '*', local: id.text });
      } else if (c.type === 'named_imports') {
        for (const s of c.namedChildren) {
          if (s?.type !== 'import_specifier') continue;
          const name = s.childForFieldName('name')?.text;
          if (name) names.push({ imported: name, local: s.childForFieldName('alias')?.text ?? name });
        }
      }
    }
    out.push({ specifier, names, reexport: false, star: false, line });
    return;
  }
  if (n.type === 'export_statement') {
    const specifier = unquote(n.childForFieldName('source'));
    if (specifier === null) return;
    const clause = n.namedChildren.find((c) => c?.type === 'export_clause');
    const names: ImportedName[] = [];
    for (const s of clause?.namedChildren ?? []) {
      if (s?.type !== 'export_specifier') continue;
      const name = s.childForFieldName('name')?.text;
      if (name) names.push({ imported: name, local: s.childForFieldName('alias')?.text ?? name });
    }
    const ns = n.namedChildren.find((c) => c?.type === 'namespace_export');
    const nsName = ns?.namedChildren.find((c) => c?.type === 'identifier' || c?.type === 'string')?.text;
    if (nsName) names.push({ imported: '*', local: nsName });
    out.push({ specifier, names, reexport: true, star: !clause && !ns, line });
    return;
  }
  // CommonJS: const x = require('./y'); const { a, b: c } = require('./y')
  if (n.type === 'lexical_declaration' || n.type === 'variable_declaration') {
    for (const d of n.namedChildren) {
      if (d?.type !== 'variable_declarator') continue;
      const value = d.childForFieldName('value');
      if (value?.type !== 'call_expression' || value.childForFieldName('function')?.text !== 'require') continue;
      const arg = value.childForFieldName('arguments')?.namedChildren[0];
      if (arg?.type !== 'string') continue;
      const specifier = unquote(arg);
      const pattern = d.childForFieldName('name');
      if (specifier === null || !pattern) continue;
      const names: ImportedName[] = [];
      if (pattern.type === 'identifier') names.push({ imported: '*', local: pattern.text });
      else if (pattern.type === 'object_pattern') {
        for (const p of pattern.namedChildren) {
          if (p?.type === 'shorthand_property_identifier_pattern') names.push({ imported: p.text, local: p.text });
          else if (p?.type === 'pair_pattern') {
            const key = p.childForFieldName('key')?.text;
            const value = p.childForFieldName('value');
            if (key && value?.type === 'identifier') names.push({ imported: key, local: value.text });
          }
        }
      }
      out.push({ specifier, names, reexport: false, star: false, line: n.startPosition.row });
    }
  }
}

function pythonImport(n: Node, out: ImportRef[]): void {
  const line = n.startPosition.row;
  if (n.type === 'import_statement') {
    // import a.b, c.d as e: each module is referenced through its local name.
    for (const c of n.namedChildren) {
      if (!c) continue;
      if (c.type === 'dotted_name') out.push({ specifier: c.text, names: [{ imported: '*', local: c.text }], reexport: false, star: false, line });
      else if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name && alias) out.push({ specifier: name, names: [{ imported: '*', local: alias }], reexport: false, star: false, line });
      }
    }
    return;
  }
  if (n.type !== 'import_from_statement') return;
  const module = n.childForFieldName('module_name');
  if (!module) return;
  const specifier = module.text.replace(/\s+/g, '');
  const names: ImportedName[] = [];
  let star = false;
  for (let i = 0; i < n.childCount; i++) {
    const c = n.child(i);
    if (!c || c.id === module.id) continue;
    if (c.type === 'wildcard_import') star = true;
    else if (n.fieldNameForChild(i) === 'name') {
      if (c.type === 'dotted_name') names.push({ imported: c.text, local: c.text });
      else if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name && alias) names.push({ imported: name, local: alias });
      }
    }
  }
  out.push({ specifier, names, reexport: false, star, line });
}
