/**
 * Goldens of each repository-context source on the small workspaces in test/fixtures/repo-context: imports that
 * resolve (relative, `index.ts`, `export *`, aliased re-exports, `__init__.py`, submodules), ones that do not
 * (packages, missing files), a re-export cycle and a file that does not parse.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { type CursorFile, importSnippets } from '../../../src/completion/context/repo/importContext';
import { ModuleIndex } from '../../../src/completion/context/repo/moduleIndex';
import { SourceParser } from '../../../src/completion/context/repo/parseSource';
import { similarSnippets } from '../../../src/completion/context/repo/similarSnippets';
import { languageOfPath } from '../../../src/completion/context/repo/sourceLanguage';
import { WorkspaceFiles } from '../../../src/platform/workspaceFiles';
import { FIXTURES, matchGolden } from './goldens';

const parser = new SourceParser();

function cursorFile(root: string, rel: string, line: number): CursorFile {
  const text = fs.readFileSync(path.join(FIXTURES, root, rel), 'utf8');
  return { path: rel, text, lang: languageOfPath(rel)!, line };
}

async function importsAt(root: string, rel: string, line: number) {
  const index = new ModuleIndex(new WorkspaceFiles(path.join(FIXTURES, root)), parser);
  const snippets = await importSnippets(cursorFile(root, rel, line), index);
  return snippets.map((s) => ({ path: s.path, line: s.line, names: s.names, score: Number(s.score.toFixed(3)), text: s.text }));
}

test('imports (TypeScript): relative files, index.ts with export *, an aliased re-export, a namespace import through a cycle, a broken file', async () => {
  const got = await importsAt('ts', 'src/main.ts', 13);
  matchGolden('imports-ts.json', got);
  const where = (name: string) => got.find((s) => s.names?.includes(name))?.path;
  assert.equal(where('computeChecksumValue'), 'src/checksums.ts');
  assert.equal(where('Rectangle'), 'src/geometry/shapes.ts', 'through index.ts: export * from ./shapes');
  assert.equal(where('distanceBetweenPoints'), 'src/geometry/distance.ts', 'export { distanceBetweenPoints as distance }');
  assert.equal(where('fromB'), 'src/cycleB.ts', 'cycle.fromB() through cycleA <-> cycleB');
  assert.equal(where('stillHere'), 'src/broken.ts', 'a file with parse errors still gives its intact declarations');
  assert.ok(!got.some((s) => s.names?.includes('missingThing')), 'an import of a missing file gives nothing');
  const rect = got.find((s) => s.names?.includes('Rectangle'))!;
  assert.match(rect.text, /surfaceAreaOfShape\(\): number \{ … \}/, 'a long method body is elided to its signature');
  assert.doesNotMatch(rect.text, /cached/, 'private members are left out');
});

test('imports (Python): __init__.py re-exports, aliases, a submodule imported from its package, dotted module imports', async () => {
  const got = await importsAt('py', 'shop/checkout.py', 12);
  matchGolden('imports-py.json', got);
  const where = (name: string) => got.find((s) => s.names?.includes(name))?.path;
  assert.equal(where('Cart'), 'shop/models/cart.py', 'from shop import Cart: shop/__init__.py imports it from .models.cart');
  assert.equal(where('apply_discount'), 'shop/pricing.py', 'discount is apply_discount, aliased in __init__.py');
  assert.equal(where('pricing'), 'shop/pricing.py', 'from . import pricing: a submodule');
  const cart = got.find((s) => s.names?.includes('Cart'))!;
  assert.match(cart.text, /\n {4}def add_item\(self, name: str, price: float\) -> None: \.\.\.\n/, 'a long method is its signature, one line');
  assert.doesNotMatch(cart.text, /_secret/, 'private methods are left out');
});

test('similar snippets: the window of another file most like the code above the cursor, never the file itself', () => {
  const query = 'const total = cart.items.reduce((sum, item) => sum + item.price * item.quantity, 0);\nconst taxed = applyTax(total, region);';
  const candidates = [
    { path: 'src/current.ts', text: query },
    {
      path: 'src/orders.ts',
      text: `${'// filler\n'.repeat(30)}export function orderTotal(cart: Cart) {\n  return cart.items.reduce((sum, item) => sum + item.price * item.quantity, 0);\n}\nexport const withTax = applyTax(orderTotal(c), region);`,
    },
    { path: 'src/unrelated.ts', text: 'export function parseArgs(argv: string[]) {\n  return argv.filter(Boolean);\n}' },
  ];
  const got = similarSnippets(query, candidates, 'src/current.ts');
  matchGolden('similar.json', got);
  assert.equal(got[0]?.path, 'src/orders.ts');
  assert.ok(!got.some((s) => s.path === 'src/current.ts' || s.path === 'src/unrelated.ts'));
  assert.match(got[0].text, /orderTotal/);
});
