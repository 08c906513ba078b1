import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as esbuild from 'esbuild';
import * as fc from 'fast-check';
import grammars from '../../../src/completion/syntax/grammars.json';
import { grammarFor, SUPPORTED_LANGUAGE_IDS } from '../../../src/completion/syntax/languages';
import { SyntaxRefiner, type SyntaxWindow } from '../../../src/completion/syntax/syntaxRefiner';
import { ROOT } from '../../helpers';
import { windowAt } from './windowAt';

/** One golden case: `doc` lines with the cursor at █, the suggestion and what refine() returns (null: dropped). */
interface GoldenCase {
  name: string;
  /** cut: cut at a block end; drop: adds parse errors; keep-with-errors: kept although the window has errors; keep. */
  kind: 'cut' | 'drop' | 'keep-with-errors' | 'keep';
  doc: string[];
  text: string[];
  expected: string[] | null;
}

const GOLDEN = path.join(ROOT, 'test', 'completion', 'syntax', 'golden');

const logs: string[] = [];
const refiner = new SyntaxRefiner({ log: (l) => logs.push(l) });
/** Parses every window from scratch: the incremental path must give the same answers. */
const fresh = new SyntaxRefiner({ log: (l) => logs.push(l), noReuse: true });

before(async () => {
  for (const id of SUPPORTED_LANGUAGE_IDS) {
    assert.equal(await refiner.ready(id), true, `grammar for ${id} loads: ${logs.join('; ')}`);
    assert.equal(await fresh.ready(id), true);
  }
});

after(() => {
  refiner.dispose();
  fresh.dispose();
});

const GOLDEN_LANGUAGES = ['python', 'typescript', 'typescriptreact', 'javascript', 'go', 'rust', 'java', 'c', 'cpp'];

for (const languageId of GOLDEN_LANGUAGES) {
  test(`golden: ${languageId}`, () => {
    const cases = JSON.parse(fs.readFileSync(path.join(GOLDEN, `${languageId}.json`), 'utf8')) as GoldenCase[];
    for (const kind of ['cut', 'drop', 'keep-with-errors'] as const) {
      assert.ok(
        cases.some((c) => c.kind === kind),
        `${languageId} has a "${kind}" case`,
      );
    }
    for (const c of cases) {
      const w = windowAt(languageId, c.doc.join('\n'));
      const text = c.text.join('\n');
      const expected = c.expected === null ? null : c.expected.join('\n');
      if (c.kind === 'keep-with-errors') assert.ok((refiner.windowErrors(w) ?? 0) > 0, `${c.name}: the window has parse errors`);
      assert.equal(refiner.refine(text, w), expected, c.name);
      const outcome = refiner.lastOutcome;
      assert.equal(outcome, c.kind === 'drop' ? 'dropped' : c.kind === 'cut' ? 'cut' : 'unchanged', `${c.name}: outcome`);
      assert.equal(fresh.refine(text, w), expected, `${c.name} (parsed from scratch)`);
    }
  });
}

test('every supported language id maps to a grammar in grammars.json', () => {
  for (const id of ['python', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'go', 'rust', 'java', 'c', 'cpp']) {
    const spec = grammarFor(id);
    assert.ok(spec, id);
    assert.ok(Object.hasOwn(grammars.grammars, spec.grammar), id);
  }
  assert.equal(grammarFor('toString'), undefined);
});

test('a single-line suggestion is never cut, a multi-line one never inside its first line', () => {
  const w = windowAt('python', 'def f(x):\n    return x█\n\ndef g():\n    pass');
  assert.equal(refiner.refine(' + 1', w), ' + 1');
  assert.equal(refiner.refine(' + 1\n\ndef h():\n    pass', w), ' + 1');
});

test('a suggestion that leaves the cursor block at once (a dedent to a new function) is not cut, and an empty cut drops it', () => {
  const w = windowAt('python', 'def f(x):\n    if x:\n        return 1█');
  // The if block ends at the cursor; the suggestion goes on in f's block.
  assert.equal(refiner.refine('\n    return 2\n\ndef g():\n    pass', w), '\n    return 2');
  const brace = windowAt('typescript', 'function f() {\n  █\n}');
  assert.equal(refiner.refine('}\n\nfunction g() {}', brace), null);
  assert.equal(refiner.lastOutcome, 'dropped');
});

test('unknown language: unchanged, one log line', () => {
  const lines: string[] = [];
  const r = new SyntaxRefiner({ log: (l) => lines.push(l) });
  const w = { ...windowAt('python', 'x = █'), languageId: 'cobol' };
  assert.equal(r.refine('1))', w), '1))');
  assert.equal(r.refine('2))', w), '2))');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /cobol/);
});

test('not loaded yet: unchanged (refine() starts the load)', async () => {
  const r = new SyntaxRefiner();
  const w = windowAt('python', 'x = █');
  assert.equal(r.isReady('python'), false);
  assert.equal(r.refine('1))', w), '1))');
  assert.equal(r.lastOutcome, 'skipped');
  assert.equal(await r.ready('python'), true);
  assert.equal(r.refine('1))', w), null);
  r.dispose();
});

test('a grammar that fails to load: unchanged, exactly one log line, no throw', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-wasm-'));
  try {
    fs.copyFileSync(require.resolve(`${grammars.runtime.package}/${grammars.runtime.path}`), path.join(dir, path.basename(grammars.runtime.path)));
    fs.writeFileSync(path.join(dir, path.basename(grammars.grammars.python.path)), Buffer.from('\0asm\x01\0\0\0 this is not a grammar'));
    const lines: string[] = [];
    const r = new SyntaxRefiner({ wasmDir: dir, log: (l) => lines.push(l) });
    r.prepare('python');
    r.prepare('python');
    assert.equal(await r.ready('python'), false);
    const w = windowAt('python', 'x = █');
    assert.equal(r.refine('1))', w), '1))');
    assert.equal(r.refine('2))', w), '2))');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0], /python/);
    // A grammar file that is not there at all: the same.
    assert.equal(await r.ready('go'), false);
    assert.equal(r.refine('x', { ...w, languageId: 'go' }), 'x');
    assert.equal(lines.length, 2);
    r.dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a window over maxChars is not parsed: unchanged, one log line', async () => {
  const lines: string[] = [];
  const r = new SyntaxRefiner({ log: (l) => lines.push(l), maxChars: 5000 });
  assert.equal(await r.ready('python'), true);
  const w = windowAt('python', `${'x = 1\n'.repeat(1000)}y = █`);
  assert.equal(r.refine('2))', w), '2))');
  assert.equal(r.lastOutcome, 'skipped');
  assert.equal(r.refine('3))', w), '3))');
  assert.equal(lines.length, 1);
  // The default cap: 20,000 characters.
  const big = windowAt('python', `${'x = 1\n'.repeat(4000)}y = █`);
  assert.equal(refiner.refine('2))', big), '2))');
  assert.equal(refiner.lastOutcome, 'skipped');
  r.dispose();
});

test('a parse over the time limit is abandoned: unchanged, one log line', async () => {
  const lines: string[] = [];
  const r = new SyntaxRefiner({ log: (l) => lines.push(l), parseTimeoutMs: -1 });
  assert.equal(await r.ready('c'), true);
  const w = windowAt('c', `${'int a = 1;\n'.repeat(200)}int b = █`);
  assert.equal(r.refine('2));', w), '2));');
  assert.equal(r.refine('3));', w), '3));');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /abandoned/);
  r.dispose();
});

test('a logger that throws does not break refine()', () => {
  const r = new SyntaxRefiner({
    log: () => {
      throw new Error('logger down');
    },
  });
  assert.equal(r.refine('x', { ...windowAt('python', 'a = █'), languageId: 'nope' }), 'x');
});

test('refine() never throws and returns the suggestion, a prefix of it, or null (random windows)', () => {
  const code = fc.string({
    unit: fc.constantFrom('a', ' ', '\n', '(', ')', '{', '}', '[', ']', '"', "'", '`', '#', '/', '*', ':', ';', '=', 'é', '😀', '\t', '\\'),
    maxLength: 60,
  });
  fc.assert(
    fc.property(fc.constantFrom(...SUPPORTED_LANGUAGE_IDS), code, code, code, code, (languageId, above, cursorLine, below, text) => {
      const split = Math.floor(cursorLine.length / 2);
      const w: SyntaxWindow = {
        languageId,
        prefix: above === '' ? '' : `${above.replace(/\n$/, '')}\n`,
        linePrefix: cursorLine.slice(0, split).replace(/\n/g, ' '),
        lineSuffix: cursorLine.slice(split).replace(/\n/g, ' '),
        suffix: below === '' ? '' : `\n${below}`,
      };
      const out = refiner.refine(text, w);
      assert.ok(out === null || out === text || text.startsWith(out), JSON.stringify({ w, text, out }));
    }),
    { numRuns: 300, seed: 16 },
  );
  // No exception was caught on the way (a parse timeout on a loaded machine would be a fair log line).
  assert.deepEqual(
    logs.filter((l) => /pass unchecked/.test(l)),
    [],
  );
});

test('from the bundle: esbuild output finds the .wasm files in dist/tree-sitter/, with no node_modules around', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-bundle-'));
  try {
    const entry = path.join(dir, 'entry.ts');
    fs.writeFileSync(
      entry,
      [
        `import { SyntaxRefiner } from ${JSON.stringify(path.join(ROOT, 'src', 'completion', 'syntax', 'syntaxRefiner'))};`,
        'const r = new SyntaxRefiner({ log: (l) => console.log(l) });',
        `const ids = ${JSON.stringify(SUPPORTED_LANGUAGE_IDS)};`,
        'Promise.all(ids.map((id) => r.ready(id))).then((ok) => {',
        "  const w = { languageId: 'python', prefix: 'def f():\\n', linePrefix: '    y = ', lineSuffix: '', suffix: '' };",
        "  console.log(JSON.stringify({ ok, kept: r.refine('x + 1', w), dropped: r.refine('x))', w) }));",
        '});',
      ].join('\n'),
    );
    esbuild.buildSync({
      entryPoints: [entry],
      outfile: path.join(dir, 'dist', 'extension.js'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      logLevel: 'error',
    });
    fs.mkdirSync(path.join(dir, 'dist', 'tree-sitter'));
    for (const e of [grammars.runtime, ...Object.values(grammars.grammars)]) {
      fs.copyFileSync(require.resolve(`${e.package}/${e.path}`), path.join(dir, 'dist', 'tree-sitter', path.basename(e.path)));
    }
    const out = execFileSync(process.execPath, [path.join(dir, 'dist', 'extension.js')], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: '' },
    });
    const last = JSON.parse(out.trim().split('\n').pop()!);
    assert.deepEqual(last, { ok: SUPPORTED_LANGUAGE_IDS.map(() => true), kept: 'x + 1', dropped: null }, out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a window the parser cannot read above the cursor (prose read as code) is not judged; one with a few broken lines is', () => {
  // A slice that starts inside a module docstring: its prose at column 0 reads as top-level code.
  const prose = [
    'Sorted Containers is an Apache2 licensed containers library, written in',
    'pure-Python, and fast as C-extensions.',
    '',
    "Python's standard library is great until you need a sorted collections",
    'type. Many will attest that you can get really far without one, but the',
    'moment you really need a sorted list, dict, or set, you are faced with a',
    'dozen different implementations, most using C-extensions without great',
    'documentation and benchmarking. The project has 100█',
    '"""',
    'from .sortedlist import SortedList',
  ].join('\n');
  const unreadable = windowAt('python', prose);
  assert.equal(refiner.refine('% coverage with unit tests.', unreadable), '% coverage with unit tests.');
  assert.equal(refiner.lastOutcome, 'skipped');
  assert.equal(refiner.addsErrors('% coverage with unit tests.', unreadable), null);
  // Two broken lines above (a typo, an unfinished call) leave the window readable: a stray closer is still dropped.
  const code = ['def f(x):', '    y = x +* 2', '    z = g(', '    w = 1', '    return w█', '', 'def g():', '    return 2'].join('\n');
  const readable = windowAt('python', code);
  assert.equal(refiner.refine(')) + 1', readable), null);
  assert.equal(refiner.lastOutcome, 'dropped');
});
