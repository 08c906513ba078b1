/**
 * Goldens of each repository-context source on the small workspaces in test/fixtures/repo-context: imports that
 * resolve (relative, `index.ts`, `export *`, aliased re-exports, `__init__.py`, submodules), ones that do not
 * (packages, missing files), a re-export cycle and a file that does not parse.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { type CursorFile, importSection, importSnippets } from '../../../src/completion/context/repo/importContext';
import { declarationsOf } from '../../../src/completion/context/repo/declarationsOf';
import { importsOf } from '../../../src/completion/context/repo/importsOf';
import { MemoryFiles } from '../../../src/completion/context/repo/memoryFiles';
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

/** The imports found for `text` as the file `rel` of the fixture workspace `root` (a file being edited: not on disk). */
async function importsOfText(root: string, rel: string, text: string, line: number) {
  const index = new ModuleIndex(new WorkspaceFiles(path.join(FIXTURES, root)), parser);
  return importSnippets({ path: rel, text, lang: languageOfPath(rel)!, line }, index);
}

test('imports of a file being edited: an unclosed call or string below the imports, or above a lazy import, hides none of them', async () => {
  const names = async (text: string, line: number) => (await importsOfText('py', 'shop/edited.py', text, line)).flatMap((s) => s.names ?? []).sort();
  const imports = 'from shop import Cart\nfrom .pricing import apply_discount\n\n';
  // Typing a call: the bracket is still open (tree-sitter then makes the whole module one ERROR node).
  assert.deepEqual(await names(`${imports}def total(owner):\n    c = Cart(\n    return c\n`, 4), ['Cart', 'apply_discount']);
  // A docstring being written.
  assert.deepEqual(await names(`${imports}def total(owner):\n    """Sums\n    return Cart(owner)\n`, 4), ['Cart', 'apply_discount']);
  // Code that does not parse above a lazy import inside a function.
  const lazy = `from shop import Cart\n\ndef total(owner):\n    c = Cart(\n\ndef later():\n    from .pricing import apply_discount\n    return apply_discount(1, 2)\n`;
  assert.deepEqual(await names(lazy, 3), ['Cart', 'apply_discount']);
  // TypeScript: an unclosed call after a multi-line import.
  const ts =
    "import {\n  computeChecksumValue,\n} from './checksums';\nimport { Rectangle } from './geometry';\n\nconst r = new Rectangle(computeChecksumValue(\n";
  const got = await importsOfText('ts', 'src/edited.ts', ts, 5);
  assert.deepEqual(got.flatMap((s) => s.names ?? []).sort(), ['Rectangle', 'computeChecksumValue']);
});

test('import section: the import statements alone at their lines (brackets, continuation lines), the code between them left out', () => {
  assert.equal(importSection('import a\nfrom b import (\n    c,\n    d,\n)\nx = f(\n'), 'import a\nfrom b import (\n    c,\n    d,\n)');
  assert.equal(importSection('from b import c, \\\n    d\nprint("(")\n'), 'from b import c, \\\n    d');
  assert.equal(importSection("import { a } from './a'; // (\nconst s = '{';\n"), "import { a } from './a'; // (");
  assert.equal(importSection('import a\ndef f():\n    x = g(\n    from .b import (c,\n        d)\n'), 'import a\n\n\nfrom .b import (c,\n        d)');
  assert.equal(importSection("export {\n  a,\n} from './a';\nlet x = [\n"), "export {\n  a,\n} from './a';");
  assert.equal(importSection('x = 1\n'), '');
});

test('a file that does not parse as a whole (one unclosed bracket): its imports and the declarations that parsed are still found', async () => {
  const summary = (text: string, lang: 'python' | 'typescript') =>
    parser.withTree(text, lang, (root) => ({ imports: importsOf(root, lang), declarations: [...declarationsOf(root, lang).keys()] }));
  // An unclosed call in a class body: tree-sitter makes the whole module one ERROR node.
  const py = await summary(
    'from .pricing import apply_discount\n\ndef before():\n    return 1\n\nclass After:\n    x = f(\n\n    def g(self):\n        pass\n',
    'python',
  );
  assert.deepEqual(
    py?.imports.map((r) => r.specifier),
    ['.pricing'],
  );
  assert.ok(py?.declarations.includes('before'), `declarations: ${py?.declarations}`);
  const ts = await summary("import { a } from './a';\nexport function before() {}\nconst x = f(\nexport function after() {}\n", 'typescript');
  assert.deepEqual(
    ts?.imports.map((r) => r.specifier),
    ['./a'],
  );
  assert.ok(ts?.declarations.includes('before'), `declarations: ${ts?.declarations}`);
});

test('declarations of a compatibility module: names bound inside module-level try/except and if/else, the first binding shown', async () => {
  const got = await importsOfText('py', 'legacy/use.py', 'from legacy.compat import text_type, native_\n\nvalue = native_(\n', 2);
  const text = (name: string) => got.find((s) => s.names?.includes(name))?.text;
  assert.equal(text('text_type'), 'text_type = unicode');
  assert.match(text('native_') ?? '', /^def native_\(s, encoding="latin-1"\):\n {8}if isinstance/);
});

test('base classes: the class around the cursor (found by indentation, while the code does not parse), its bases through imports or the file itself, then theirs, as a subclass sees them', async () => {
  const dog = 'from zoo.animal import Animal\n\n\nclass Pet(Animal):\n    pass\n\n\nclass Dog(Pet):\n    def fetch(self):\n        x = self._feed(\n';
  const got = await importsOfText('py', 'zoo/dog.py', dog, 9);
  const animal = got.find((s) => s.names?.includes('Animal'));
  const creature = got.find((s) => s.names?.includes('Creature'));
  assert.ok(animal && creature, `snippets: ${got.map((s) => s.names)}`);
  assert.match(animal.text, /def _feed\(self, food: str\) -> None: \.\.\./, 'a protected method a subclass calls');
  assert.doesNotMatch(animal.text, /__secret|__repr__/, 'name-mangled and dunder methods are left out');
  assert.match(creature.text, /def _heartbeat/, "the base's base, from its own file");
  assert.ok(animal.score > creature.score, 'nearer bases rank higher');
  // Outside a class, the same import is the public view of Animal, and so is the view of the class it extends
  // (`Animal("rex").breathe()` is Creature's): offered below Animal, for a class used at the cursor only.
  const outside = await importsOfText('py', 'zoo/dog.py', 'from zoo.animal import Animal\n\ndef adopt():\n    a = Animal(\n', 3);
  const publicAnimal = outside.find((s) => s.names?.includes('Animal'));
  const publicCreature = outside.find((s) => s.names?.includes('Creature'));
  assert.ok(publicAnimal && publicCreature, `snippets: ${outside.map((s) => s.names)}`);
  assert.doesNotMatch(publicAnimal.text, /_feed/);
  assert.match(publicCreature.text, /def breathe/);
  assert.doesNotMatch(publicCreature.text, /_heartbeat/, 'the public view');
  assert.ok(publicAnimal.score > publicCreature.score);
  const farAway = `from zoo.animal import Animal\n\nPETS = [Animal("rex")]\n${'\n'.repeat(8)}def count():\n    return len(\n`;
  const far = await importsOfText('py', 'zoo/dog.py', farAway, 12);
  assert.ok(far.some((s) => s.names?.includes('Animal')));
  assert.ok(!far.some((s) => s.names?.includes('Creature')), 'not for a class used away from the cursor');
  // TypeScript: a generic subclass whose type parameter says `extends` too; the base is not imported under its own name.
  const button =
    "import { Widget as Base } from './widgets/base';\n\nexport class Button<T extends object = {}> extends Base {\n  click(): void {\n    this.\n";
  const ts = await importsOfText('ts', 'src/button.ts', button, 4);
  const widget = ts.find((s) => s.names?.includes('Widget'));
  assert.match(widget?.text ?? '', /protected render\(\): string/);
  assert.doesNotMatch(widget?.text ?? '', /cache/, 'private members stay out');
  assert.ok((widget?.score ?? 0) > 0.99, 'ranked as a name used on the cursor line');
});

test('a class too long for its summary keeps the methods the file at hand uses, as a subclass or the outside sees them', async () => {
  const methods = Array.from({ length: 160 }, (_, i) => `    def ${i % 2 ? '_' : ''}op${i}(self, path):\n        return path\n`).join('\n');
  const files = new MemoryFiles({ 'fs/spec.py': `class AbstractFileSystem:\n    """Files anywhere."""\n\n${methods}` });
  const index = new ModuleIndex(files, parser);
  const snippetsAt = (text: string, line: number) => importSnippets({ path: 'fs/memory.py', text, lang: 'python', line }, index);
  const head = 'from fs.spec import AbstractFileSystem\n\n\n';
  // A subclass that calls op150 and _op151 elsewhere: both are back, before the cut's mark; op152, unused, is not.
  const sub = `${head}class MemoryFileSystem(AbstractFileSystem):\n    def rm(self, path):\n        self.op150(path)\n        self._op151(path)\n\n    def mv(self, a, b):\n        x = self.\n`;
  const base = (await snippetsAt(sub, 9)).find((s) => s.names?.includes('AbstractFileSystem'));
  assert.ok(base, 'the base class');
  assert.match(base.text, /def op150\(self, path\): \.\.\.\n {4}def _op151\(self, path\): \.\.\.\n…$/);
  assert.doesNotMatch(base.text, /op152/);
  assert.match(base.text, /def op2\(self, path\)/, 'the summary itself is unchanged');
  // The outside view: the public method used, never a protected one.
  const outside = `${head}def copy(fs):\n    fs.op150(1)\n    fs._op151(2)\n    return AbstractFileSystem.\n`;
  const pub = (await snippetsAt(outside, 6)).find((s) => s.names?.includes('AbstractFileSystem'));
  assert.match(pub?.text ?? '', /def op150\(self, path\)/);
  assert.doesNotMatch(pub?.text ?? '', /_op151|_op1\b/);
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

test('similar snippets: a window shown for the last query holds its place until another is clearly more similar', () => {
  // Jaccard against the query's ten names: shown 5/15, near 5/13 (1.15x), clearly better 6/10 (1.8x), faint 2/19.
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}Name${i}`);
  const query = names('query', 10).join('\n');
  const file = (path: string, shared: number, own: number) => ({ path, text: [...names('query', shared), ...names(path.replace(/\W/g, ''), own)].join('\n') });
  const shownFile = file('src/shown.ts', 5, 5);
  const near = file('src/near.ts', 5, 3);
  const better = file('src/better.ts', 6, 0);
  const faint = file('src/faint.ts', 2, 9);
  const shown = similarSnippets(query, [shownFile], 'src/current.ts', 1);
  assert.equal(shown[0]?.path, 'src/shown.ts');

  assert.equal(similarSnippets(query, [shownFile, near], 'src/current.ts', 1)[0]?.path, 'src/near.ts');
  const held = similarSnippets(query, [shownFile, near], 'src/current.ts', 1, shown);
  assert.equal(held[0]?.path, 'src/shown.ts');
  assert.equal(held[0]?.score, shown[0]?.score, 'a held window keeps its own score');
  assert.equal(similarSnippets(query, [shownFile, near, better], 'src/current.ts', 1, shown)[0]?.path, 'src/better.ts');

  // Below the similarity floor (0.105 < 0.12), a window is dropped unless it was shown.
  const faintShown = [{ ...shown[0], path: 'src/faint.ts', line: 0 }];
  assert.deepEqual(similarSnippets(query, [faint], 'src/current.ts'), []);
  assert.equal(similarSnippets(query, [faint], 'src/current.ts', 3, faintShown)[0]?.path, 'src/faint.ts');
});
