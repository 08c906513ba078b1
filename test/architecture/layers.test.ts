/**
 * The layering docs/architecture.md describes, checked on the import statements of src/: which folder may import
 * which, and no runtime import cycle. A rule broken here is a process boundary crossed or a module that cannot
 * load on its own.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

interface ImportEdge {
  from: string;
  /** A path relative to the repository ('src/...') for a relative import; the specifier otherwise. */
  to: string;
  typeOnly: boolean;
}

const SRC = path.join(ROOT, 'src');

function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join('/');

/** `import … from 'x'`, `export … from 'x'`, `import('x')`, `require('x')`, with whether only types are named. */
function importsOf(file: string): ImportEdge[] {
  const text = fs.readFileSync(file, 'utf8');
  const edges: ImportEdge[] = [];
  const resolve = (spec: string) => {
    if (!spec.startsWith('.')) return spec;
    const base = path.resolve(path.dirname(file), spec);
    const hit = [`${base}.ts`, path.join(base, 'index.ts')].find((p) => fs.existsSync(p));
    return rel(hit ?? base);
  };
  const statement = /^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms;
  for (const m of text.matchAll(statement)) {
    const names = m[3].trim();
    const allNamedTypes =
      /^\{[^}]*\}$/.test(names) &&
      names
        .slice(1, -1)
        .split(',')
        .filter((n) => n.trim())
        .every((n) => n.trim().startsWith('type '));
    edges.push({ from: rel(file), to: resolve(m[4]), typeOnly: Boolean(m[2]) || allNamedTypes });
  }
  for (const m of text.matchAll(/(?:\bimport|\brequire)\(\s*'([^']+)'\s*\)/g)) edges.push({ from: rel(file), to: resolve(m[1]), typeOnly: false });
  return edges;
}

const edges = sourceFiles().flatMap(importsOf);
/** Every folder a rule names: a rule naming a folder that was renamed away could never fail (checked below). */
const NAMED = new Set<string>();
const under = (p: string, ...folders: string[]) => {
  for (const f of folders) NAMED.add(f);
  return folders.some((f) => p.startsWith(`src/${f}/`) || p === `src/${f}.ts`);
};

function violations(rule: (e: ImportEdge) => boolean): string[] {
  return edges.filter(rule).map((e) => `${e.from} imports ${e.to}`);
}

test('the parser sees the imports (a broken regex must not make every rule pass)', () => {
  assert.ok(edges.length > 300, `only ${edges.length} imports found`);
  assert.ok(edges.some((e) => e.to === 'vscode'));
  assert.ok(edges.some((e) => e.typeOnly) && edges.some((e) => !e.typeOnly));
});

test("only src/vscode/ and src/extension.ts import 'vscode'", () => {
  assert.deepEqual(
    violations((e) => e.to === 'vscode' && !under(e.from, 'vscode', 'extension')),
    [],
  );
});

test('nothing outside the editor adapters imports them', () => {
  assert.deepEqual(
    violations((e) => under(e.to, 'vscode', 'extension') && !under(e.from, 'vscode', 'extension')),
    [],
  );
});

test('engine/shared, used on both sides of the worker boundary, imports nothing from the other engine folders', () => {
  assert.deepEqual(
    violations((e) => under(e.from, 'engine/shared') && e.to.startsWith('src/') && !under(e.to, 'engine/shared')),
    [],
  );
});

test("the extension host never loads the worker's decode loop or message loop (decode/, worker/) at run time", () => {
  const hostSide = (p: string) => under(p, 'completion', 'servers', 'hub', 'net', 'platform', 'cli', 'vscode', 'extension', 'engine/host');
  assert.deepEqual(
    violations((e) => hostSide(e.from) && !e.typeOnly && under(e.to, 'engine/decode', 'engine/worker')),
    [],
  );
});

test('the pipeline (src/completion/) is pure: no vscode, no engine internals, no servers, no file system or CLI', () => {
  const internals = ['engine/decode', 'engine/worker', 'engine/model', 'engine/host', 'servers', 'hub', 'platform', 'cli', 'vscode'];
  assert.deepEqual(
    violations((e) => under(e.from, 'completion') && under(e.to, ...internals)),
    [],
  );
});

test('no runtime import cycle in src/', () => {
  const graph = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly && e.to.startsWith('src/')) graph.set(e.from, [...(graph.get(e.from) ?? []), e.to]);
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (node: string, trail: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(node)), node].join(' -> '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  assert.deepEqual(cycles, []);
});

test('every folder the rules name exists (a renamed folder must not make a rule pass silently)', () => {
  // Runs after the rules above (node:test runs a file's tests in order), which filled NAMED.
  assert.ok(NAMED.size > 5);
  for (const f of NAMED) {
    const exists = fs.existsSync(path.join(SRC, f)) || fs.existsSync(path.join(SRC, `${f}.ts`));
    assert.ok(exists, `a layering rule names src/${f}, which does not exist`);
  }
});
