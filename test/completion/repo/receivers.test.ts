/**
 * The classes of the objects on the cursor line, from declared types (receiverTypes.ts, declaredTypes.ts): the
 * patterns on their own, then whole workspaces in memory (Python and TypeScript), where the class must come from
 * another file through the cursor file's imports.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withMembersUsed } from '../../../src/completion/context/repo/declarationsOf';
import { declarationOn, namedType, returnType } from '../../../src/completion/context/repo/declaredTypes';
import { importSnippets, receiverSnippets } from '../../../src/completion/context/repo/importContext';
import { MemoryFiles } from '../../../src/completion/context/repo/memoryFiles';
import { ModuleIndex } from '../../../src/completion/context/repo/moduleIndex';
import { SourceParser } from '../../../src/completion/context/repo/parseSource';
import { receiverChains } from '../../../src/completion/context/repo/receiverTypes';
import { languageOfPath } from '../../../src/completion/context/repo/sourceLanguage';

const parser = new SourceParser();

test('namedType: the one class an annotation names; builtins, containers and unions of classes name none', () => {
  const cases: [string, string | null][] = [
    ['Optional[finder.Plugins]', 'finder.Plugins'],
    ['typing.Optional[Foo]', 'Foo'],
    ['Union[Foo, None]', 'Foo'],
    ['Foo | None', 'Foo'],
    ['"Foo"', 'Foo'],
    ["'pkg.Foo'", 'pkg.Foo'],
    ['Foo<T>', 'Foo'],
    ['Foo[int]', 'Foo'],
    ['Foo | undefined | null', 'Foo'],
    ['Annotated[Foo, "meta"]', 'Foo'],
    ['List[Foo]', null],
    ['Foo[]', null],
    ['Promise<Foo>', null],
    ['str', null],
    ['string', null],
    ['Foo | Bar', null],
    ['Union[Foo, Bar]', null],
    ['{ a: number }', null],
    ['(x: number) => Foo', null],
  ];
  for (const [annotation, want] of cases) assert.equal(namedType(annotation), want, annotation);
});

test('declarationOn: annotations, constructions, calls, aliases and doc comments; comparisons and other names are not declarations', () => {
  const py = (line: string, target: string) => declarationOn(line, target, 'python');
  const ts = (line: string, target: string) => declarationOn(line, target, 'typescript');
  assert.deepEqual(py('        self.plugins: Optional[finder.Plugins] = None', 'self.plugins'), { type: 'finder.Plugins' });
  assert.deepEqual(py('    def run(self, store: Store, n: int = 3) -> None:', 'store'), { type: 'Store' });
  assert.deepEqual(py('    def run(self, store: Store, n: int = 3) -> None:', 'n'), null);
  assert.deepEqual(py('    cart = models.Cart(owner)', 'cart'), { type: 'models.Cart' });
  assert.deepEqual(py('    cart = make_cart(owner)', 'cart'), { callee: 'make_cart' });
  assert.deepEqual(py('        self.proc = self._make_processor()', 'self.proc'), { callee: 'self._make_processor' });
  assert.deepEqual(py('        self.machine = machine', 'self.machine'), { alias: 'machine' });
  assert.deepEqual(py('    RequestClass = Request', 'RequestClass'), { alias: 'Request' });
  assert.deepEqual(py('        self.machine = None', 'self.machine'), null);
  assert.deepEqual(py('    if cart == other:', 'cart'), null);
  assert.deepEqual(py('    total = cart.total()', 'cart'), null);
  assert.deepEqual(py('    subtotal = 3', 'total'), null);
  assert.deepEqual(py('            machine (GraphMachine): The associated GraphMachine', 'machine'), { type: 'GraphMachine' });
  assert.deepEqual(py('        :type machine: GraphMachine', 'machine'), { type: 'GraphMachine' });
  assert.deepEqual(py('        :param GraphMachine machine: the machine', 'machine'), { type: 'GraphMachine' });
  assert.deepEqual(ts('  private readonly service?: Service<Item>;', 'service'), { type: 'Service' });
  assert.deepEqual(ts('  constructor(private readonly log: Logger, other: number) {', 'log'), { type: 'Logger' });
  assert.deepEqual(ts('    this.cache = new LruCache<string, number>(10);', 'this.cache'), { type: 'LruCache' });
  assert.deepEqual(ts('  const tx = await createTransaction({', 'tx'), { callee: 'createTransaction' });
  assert.deepEqual(ts('  let tx: Map<string, Transaction> = new Map();', 'tx'), null);
  assert.deepEqual(ts('    case tx: return 1;', 'tx'), null);
  assert.deepEqual(declarationOn(' * @param {State} state The state.', 'state', 'javascript'), { type: 'State' });
});

test('returnType: past the doc comment and decorators, over a signature of several lines', () => {
  assert.equal(returnType('@cached\ndef make(\n    a: int,\n) -> Optional[proc.FileProcessor]:\n    ...', 'python'), 'proc.FileProcessor');
  assert.equal(returnType('def make(a):\n    return 1', 'python'), null);
  assert.equal(
    returnType(
      '/**\n * const t = make({ a: 1 }): Example\n */\nexport function make<T extends object = {}>(config: Config<T>): Transaction<T> {',
      'typescript',
    ),
    'Transaction',
  );
  assert.equal(returnType('export async function load(): Promise<Model> {', 'typescript'), null);
});

test('receiverChains: the names before each member access on a line; `self.`/`this.` alone and calls are not receivers', () => {
  assert.deepEqual(receiverChains('        x = self.plugins.versions_str(self.opts.a, y.z)'), [['self', 'plugins'], ['self', 'opts'], ['y']]);
  assert.deepEqual(receiverChains('    return this.cache?.get(key)'), [['this', 'cache']]);
  assert.deepEqual(receiverChains('    self.run()'), []);
  assert.deepEqual(receiverChains('    make().value'), []);
  assert.deepEqual(receiverChains('    x = 1.5'), []);
  assert.deepEqual(receiverChains(`${'a.'.repeat(600)}b`), [], 'a line over 1,000 characters is not read');
});

const PY: Record<string, string> = {
  'app/plugins/finder.py': [
    'class Plugins:',
    '    """The loaded plugins."""',
    '',
    '    def versions_str(self) -> str:',
    '        return ", ".join(self.names)',
    '',
    'def load_plugins() -> "Plugins":',
    '    return Plugins()',
  ].join('\n'),
  'app/processor.py': ['class FileProcessor:', '    def build_ast(self):', '        return None', ''].join('\n'),
  'app/request.py': ['class BaseRequest:', '    def blank(cls, path):', '        return cls()', '', 'class Request(BaseRequest):', '    pass'].join('\n'),
  'app/graph.py': ['class GraphMachine:', '    def get_global_name(self):', '        return "g"'].join('\n'),
  'app/main.py': [
    'from typing import Optional',
    'from app.plugins import finder',
    'from app import processor',
    'from app.request import Request',
    'from app.graph import GraphMachine',
    '',
    'class Application:',
    '    RequestClass = Request',
    '',
    '    def __init__(self, machine):',
    '        """Args:',
    '            machine (GraphMachine): the machine',
    '        """',
    '        self.plugins: Optional[finder.Plugins] = None',
    '        self.machine = machine',
    '        self.processor = self._make_processor()',
    '',
    '    def _make_processor(self) -> Optional[processor.FileProcessor]:',
    '        return processor.FileProcessor()',
    '',
    '    def run(self, names: list):',
    '        a = self.plugins.', // 21
    '        b = self.processor.', // 22
    '        c = self.RequestClass.', // 23
    '        d = self.machine.', // 24
    '        loaded = finder.load_plugins()',
    '        e = loaded.', // 26
    '        f = names.', // 27
  ].join('\n'),
};

async function receiversAt(files: Record<string, string>, path: string, line: number, withParser = parser) {
  const index = new ModuleIndex(new MemoryFiles(new Map(Object.entries(files))), withParser);
  const snippets = await receiverSnippets({ path, text: files[path], lang: languageOfPath(path)!, line }, index);
  for (const s of snippets) assert.equal(s.atCursor, true, 'laid out as the cursor line changes it');
  return snippets.map((s) => `${s.path}#${s.names?.join(',')}`);
}

test('Python: an annotated attribute, a method that says what it returns, a class attribute bound to a class, a parameter typed in the docstring, a function that says what it returns', async () => {
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 21), ['app/plugins/finder.py#Plugins']);
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 22), ['app/processor.py#FileProcessor']);
  // Request's own bases come too: `blank` is declared on BaseRequest.
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 23), ['app/request.py#Request', 'app/request.py#BaseRequest']);
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 24), ['app/graph.py#GraphMachine']);
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 26), ['app/plugins/finder.py#Plugins']);
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 27), [], 'a list has no class in the workspace');
  assert.deepEqual(await receiversAt(PY, 'app/main.py', 20), [], 'no receiver on the line');
});

const TS: Record<string, string> = {
  'src/transactions.ts': [
    '/**',
    ' * Makes one: createTransaction({ a: 1 }): Example',
    ' */',
    'export function createTransaction<T>(config: Config<T>): Transaction<T> {',
    '  return new Transaction(config);',
    '}',
    '',
    'export class Transaction<T> {',
    '  mutate(fn: () => void): void {}',
    '}',
  ].join('\n'),
  'src/sources/base.ts': ['export abstract class BaseSource {', '  acquireToken(): string {', "    return '';", '  }', '}'].join('\n'),
  'src/service.ts': ["import { BaseSource } from './sources/base';", 'export class Service {', '  source: BaseSource;', '  fetch(): void {}', '}'].join('\n'),
  'src/main.ts': [
    "import { createTransaction } from './transactions';",
    "import { Service } from './service';",
    "import { BaseSource } from './sources/base';",
    '',
    'export class Client {',
    '  private static identitySource?: BaseSource;',
    '  constructor(private readonly service: Service) {}',
    '',
    '  run(): void {',
    '    const tx = createTransaction({ a: 1 });',
    '    tx.', // 10
    '    Client.identitySource.', // 11
    '    this.service.source.', // 12
    '  }',
    '}',
  ].join('\n'),
};

test('TypeScript: a function that says what it returns (past its doc comment), a static field, a chain through a parameter property and a field of a class in another file', async () => {
  assert.deepEqual(await receiversAt(TS, 'src/main.ts', 10), ['src/transactions.ts#Transaction']);
  assert.deepEqual(await receiversAt(TS, 'src/main.ts', 11), ['src/sources/base.ts#BaseSource']);
  assert.deepEqual(await receiversAt(TS, 'src/main.ts', 12), ['src/sources/base.ts#BaseSource']);
});

test('a class of 5,000 members and a line of receivers are read without trouble: each receiver resolves or gives nothing', async () => {
  const members = Array.from({ length: 5000 }, (_, i) => `        self.m${i}: int = ${i}`).join('\n');
  const files = {
    'big/models.py': `class Big:\n    def __init__(self):\n${members}\n        self.child: Optional[Big] = None\n`,
    'big/main.py': `from big.models import Big\n\ndef f(big: Big):\n    x = big.child.child.m4999 + big.nothing.x + ${'big.'.repeat(50)}\n`,
  };
  // Parsing the 150 KB class may take longer than the editor's deadline on a loaded machine: this test is about
  // what is read, not how fast, so its parser waits.
  assert.deepEqual(await receiversAt(files, 'big/main.py', 3, new SourceParser(undefined, 60_000)), ['big/models.py#Big']);
});

test('a namespace package (no __init__.py): `from pkg import mod` is the submodule pkg/mod.py, and `mod.Name` its declaration', async () => {
  const files = new Map(
    Object.entries({ ...PY, 'app/other.py': 'from app.plugins import finder\n\nclass Mine(finder.Plugins):\n    x = finder.load_plugins()\n' }),
  );
  const index = new ModuleIndex(new MemoryFiles(files), parser);
  const got = await importSnippets({ path: 'app/other.py', text: files.get('app/other.py') ?? '', lang: 'python', line: 3 }, index);
  const names = got.map((s) => `${s.path}#${s.names?.join(',')}`);
  assert.ok(names.includes('app/plugins/finder.py#load_plugins'), names.join(' '));
  assert.ok(names.includes('app/plugins/finder.py#Plugins'), `the base class through mod.Base: ${names.join(' ')}`);
});

test('a TypeScript class too long for its summary: members without their doc comments first, then the ones still cut come back where the file uses them', async () => {
  const member = (i: number) => `  /**\n   * Member ${i}.\n   * More about it.\n   */\n  method${i}(a: number): number {\n    return a + ${i};\n  }`;
  const text = `export class Wide {\n${Array.from({ length: 15 }, (_, i) => member(i)).join('\n')}\n}\n`;
  const summary = await new ModuleIndex(new MemoryFiles(new Map()), parser).summarize(text, 'typescript');
  const wide = summary?.declarations.get('Wide');
  assert.ok(wide);
  assert.doesNotMatch(wide.text, /Member 0\./, 'the doc comments went');
  assert.match(wide.text, /method14\(a: number\): number/, 'all 15 members fit without them');
  const long = `export class Long {\n${Array.from({ length: 80 }, (_, i) => `  field${i}: number;`).join('\n')}\n}\n`;
  const cut = (await new ModuleIndex(new MemoryFiles(new Map()), parser).summarize(long, 'typescript'))?.declarations.get('Long');
  assert.ok(cut?.cutMembers);
  assert.ok(cut.cutMembers.some((m) => m.name === 'field79'));
  assert.ok(!cut.cutMembers.some((m) => m.name === 'field0'));
  assert.match(withMembersUsed(cut.text, cut.cutMembers, new Set(['field79']), true), /field79: number\n…$/);
});

test('through the whole repository context (as `ghostline prompt` builds it): the receiver class comes in with the line that uses it, and stays', async () => {
  const { WorkspacePrompts } = await import('../../../src/cli/workspacePrompt');
  const { fimTemplateForFamily } = await import('../../../src/completion/prompt/fimTemplates');
  const model = { template: fimTemplateForFamily('qwen2.5-coder'), traits: { contextTokens: 32768, charsPerToken: 3.2 } };
  const prompts = new WorkspacePrompts(new MemoryFiles(new Map(Object.entries(TS))), model, { sources: { imports: true, similar: false, ring: false } });
  const lines = TS['src/main.ts'].split('\n');
  const contextAt = async (line: number) => (await prompts.at('src/main.ts', TS['src/main.ts'], line, lines[line].length, 'typescript')).context;
  const transaction = (context: { path: string; text: string; source: string }[]) =>
    context.filter((c) => c.path === 'src/transactions.ts' && /class Transaction/.test(c.text)).map((c) => c.source);
  assert.deepEqual(transaction(await contextAt(9)), [], 'the line names no receiver, and the file never names the class');
  const typed = await contextAt(10);
  assert.deepEqual(transaction(typed), ['imports'], '`tx.`: the class createTransaction returns');
  // Back on a line without receivers, the class stays, and the context keeps its bytes (the KV cache after it too).
  assert.deepEqual(await contextAt(9), typed);
});
