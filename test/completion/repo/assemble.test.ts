import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assembleContext } from '../../../src/completion/context/repo/assembleContext';
import type { ContextSnippet } from '../../../src/completion/context/repo/snippet';
import { buildPrompt } from '../../../src/completion/prompt/buildPrompt';
import { fimTemplateForFamily } from '../../../src/completion/prompt/fimTemplates';
import { documentContext, textSource } from '../../../src/completion/context/documentContext';
import { promptText } from '../../../src/engine/shared/prompt';
import { defaultCompletionSettings } from '../../../src/completion/settings';

const snip = (source: ContextSnippet['source'], path: string, line: number, text: string, score: number, names?: string[]): ContextSnippet => ({
  source,
  path,
  line,
  text,
  score,
  names,
});

const SNIPPETS: ContextSnippet[] = [
  snip('similar', 'src/b.ts', 40, 'const similarWindow = compute(a, b);\nreturn similarWindow * 2;', 0.5),
  snip('imports', 'src/a.ts', 10, 'export function second(x: number): number { … }', 0.8, ['second']),
  snip('imports', 'src/a.ts', 2, 'export function first(): void { … }', 0.9, ['first']),
  snip('definitions', 'src/a.ts', 2, 'export function first(): void { … }', 1, ['first']),
  snip('ring', 'src/c.ts', 0, 'older ring chunk line one\nolder ring chunk line two', 0.5),
  snip('ring', 'src/d.ts', 1, 'newer ring chunk line one\nnewer ring chunk line two', 1),
];

test('one declaration from two sources goes in once, at the stable source; files are laid out by their most stable source, snippets by line', () => {
  const got = assembleContext(SNIPPETS, 10_000, '');
  assert.deepEqual(
    got.map((c) => [c.path, c.sources]),
    [
      ['src/a.ts', ['imports']],
      ['src/c.ts', ['ring']],
      ['src/d.ts', ['ring']],
      ['src/b.ts', ['similar']],
    ],
  );
  assert.equal(got[0].text, 'export function first(): void { … }\n\nexport function second(x: number): number { … }');
});

test('the layout does not depend on the order the sources answered in (the KV cache sees the same bytes)', () => {
  const a = assembleContext(SNIPPETS, 10_000, '');
  const b = assembleContext([...SNIPPETS].reverse(), 10_000, '');
  assert.deepEqual(a, b);
});

test('the budget keeps the best snippets that fit; code already in the window is left out', () => {
  const tight = assembleContext(SNIPPETS, 60, '');
  assert.deepEqual(
    tight.map((c) => c.path),
    ['src/a.ts'],
  );
  assert.ok(tight.reduce((n, c) => n + c.text.length, 0) <= 60);
  const inWindow = assembleContext(SNIPPETS, 10_000, 'const similarWindow = compute(a, b);\n  return similarWindow * 2;');
  assert.ok(!inWindow.some((c) => c.path === 'src/b.ts'));
  assert.deepEqual(assembleContext(SNIPPETS, 0, ''), []);
});

test('each family lays the context out as it was trained: file separators, Qwen repo name, path comments otherwise; paths with /', () => {
  const ctx = documentContext(textSource('def f(x):\n    return '), { line: 1, character: 11 }, defaultCompletionSettings().budget);
  const extra = [{ path: 'pkg/util.py', text: 'def g(y):\n    return y' }];
  const qwen = promptText(buildPrompt(ctx, fimTemplateForFamily('qwen2.5-coder'), extra, 'pkg/main.py', { repoName: 'shop', languageId: 'python' }).prompt);
  assert.equal(
    qwen,
    '<|repo_name|>shop\n<|file_sep|>pkg/util.py\ndef g(y):\n    return y\n<|file_sep|>pkg/main.py\n<|fim_prefix|>def f(x):\n<|fim_suffix|><|fim_middle|>    return ',
  );
  const star = promptText(buildPrompt(ctx, fimTemplateForFamily('starcoder'), extra, 'pkg/main.py', { repoName: 'shop', languageId: 'python' }).prompt);
  assert.equal(star, '<file_sep>pkg/util.py\ndef g(y):\n    return y\n<file_sep>pkg/main.py\n<fim_prefix>def f(x):\n<fim_suffix><fim_middle>    return ');
  const deepseek = promptText(buildPrompt(ctx, fimTemplateForFamily('deepseek-coder'), extra, 'pkg/main.py', { languageId: 'python' }).prompt);
  assert.equal(deepseek, '<｜fim▁begin｜># Path: pkg/util.py\n# def g(y):\n#     return y\ndef f(x):\n<｜fim▁hole｜><｜fim▁end｜>    return ');
  const plainTs = promptText(buildPrompt(ctx, null, [{ path: 'src/u.ts', text: 'export const k = 1;' }], 'src/m.ts', { languageId: 'typescript' }).prompt);
  assert.equal(plainTs, '// Path: src/u.ts\n// export const k = 1;\ndef f(x):\n    return ');
});

test('typing on a line keeps the context block byte-identical (the KV cache reuses it), on a real workspace', async () => {
  const { WorkspacePrompts, promptModel } = await import('../../../src/cli/workspacePrompt');
  const { WorkspaceFiles } = await import('../../../src/platform/workspaceFiles');
  const { defaultModelDir } = await import('../../../src/engine/host/defaultModel');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { FIXTURES } = await import('./goldens');
  const root = path.join(FIXTURES, 'ts');
  const prompts = new WorkspacePrompts(new WorkspaceFiles(root), await promptModel(defaultModelDir()));
  const original = fs.readFileSync(path.join(root, 'src/main.ts'), 'utf8');
  const lines = original.split('\n');
  const typed = '  const total = computeChecksumValue(blob) + distance(p, q);';
  const heads = new Set<string>();
  for (let n = 2; n <= typed.length; n += 7) {
    const text = [...lines.slice(0, 13), typed.slice(0, n), ...lines.slice(13)].join('\n');
    const p = await prompts.at('src/main.ts', text, 13, n, 'typescript');
    assert.ok(p.context.length > 0, 'context is there');
    heads.add(p.text.slice(0, p.text.indexOf('<file_sep>src/main.ts')));
  }
  assert.equal(heads.size, 1, 'one context block for every keystroke on the line');
});

test('a declaration found for the cursor line goes last (it changes as the line is typed), unless a stable source offers it too', () => {
  const receiver = { ...snip('imports', 'src/z.ts', 5, 'export class Receiver { … }', 1.1, ['Receiver']), atCursor: true };
  const got = assembleContext([...SNIPPETS, receiver], 10_000, '');
  assert.deepEqual(
    got.map((c) => c.path),
    ['src/a.ts', 'src/c.ts', 'src/d.ts', 'src/z.ts', 'src/b.ts'],
    'after the imports and the ring, with the definitions',
  );
  // The same declaration from the imports: it stays at the imports' place, with the receiver's score.
  const stable = snip('imports', 'src/z.ts', 5, 'export class Receiver { … }', 0.1, ['Receiver']);
  const both = assembleContext([...SNIPPETS, stable, receiver], 10_000, '');
  assert.deepEqual(
    both.map((c) => c.path),
    ['src/a.ts', 'src/z.ts', 'src/c.ts', 'src/d.ts', 'src/b.ts'],
  );
  const tight = assembleContext([...SNIPPETS, stable, receiver], 40, '');
  assert.deepEqual(
    tight.map((c) => c.path),
    ['src/z.ts'],
    'ranked with the better score',
  );
});

test('a declaration too long for the budget gets what is left of it, cut to its first lines; whole snippets come first', () => {
  const members = Array.from({ length: 40 }, (_, i) => `  method${i}(a: number): number { … }`).join('\n');
  const big = snip('imports', 'src/big.ts', 0, `export class Big {\n${members}\n}`, 1, ['Big']);
  const small = snip('imports', 'src/small.ts', 0, 'export function small(): void { … }', 0.5, ['small']);
  const got = assembleContext([big, small], 400, '');
  assert.deepEqual(
    got.map((c) => c.path),
    ['src/big.ts', 'src/small.ts'],
  );
  const cut = got[0].text.split('\n');
  assert.equal(cut[0], 'export class Big {');
  assert.equal(cut.at(-1), '…', 'marked as cut');
  assert.ok(cut.length > 3);
  assert.equal(got[1].text, small.text, 'the whole snippet that fits is kept whole');
  assert.ok(got.reduce((n, c) => n + c.text.length + 1 + c.path.length, 0) <= 400, 'within the budget');
  // Room for fewer than three lines: left out rather than a bare signature.
  assert.deepEqual(
    assembleContext([big], 50, '').map((c) => c.path),
    [],
  );
  // Ring windows and similar code are not cut: they are windows, not declarations.
  assert.deepEqual(assembleContext([{ ...big, source: 'similar' }], 400, ''), []);
});

test("a language server's definition of an imported name goes in as the import's snippet: the bytes are those of the lines that do not use it", () => {
  const imported = snip('imports', 'src/lib.ts', 5, 'export class Store {\n  get(key: string): string;\n  set(key: string, v: string): void;\n}', 0.4, [
    'Store',
  ]);
  const other = snip('imports', 'src/util.ts', 1, 'export function helper(a: number, b: number): number { … }', 0.8, ['helper']);
  const definition = snip('definitions', 'src/lib.ts', 5, 'export class Store {\n  get(key: string): string;\n  …\n}', 1, ['Store']);
  const member = snip('definitions', 'src/lib.ts', 9, '  /** Forgets the key. */\n  delete(key: string): void;', 0.9, ['delete']);
  const away = assembleContext([imported, other], 10_000, '');
  const using = assembleContext([imported, other, definition], 10_000, '');
  assert.deepEqual(using, away, 'the same bytes on a line that uses Store and on one that does not');
  // The definition's score goes to the import: with room for one, Store (the cursor's) wins over helper.
  const tight = assembleContext([imported, other, definition], 110, '');
  assert.deepEqual(
    tight.map((c) => c.path),
    ['src/lib.ts'],
  );
  // A definition no stable source offers (a member) goes in as itself, after the stable sources.
  const withMember = assembleContext([imported, other, definition, member], 10_000, '');
  assert.equal(
    withMember
      .find((c) => c.path === 'src/lib.ts')
      ?.text.split('\n\n')
      .at(-1),
    '  /** Forgets the key. */\n  delete(key: string): void;',
  );
});

test("what the file's last prompt showed holds its place in a tight budget until something clearly better comes", () => {
  const a = snip('imports', 'src/a.ts', 1, `export function alpha(): void {\n  ${'a'.repeat(60)}\n}`, 0.6, ['alpha']);
  const b = snip('imports', 'src/b.ts', 1, `export function beta(): void {\n  ${'b'.repeat(60)}\n}`, 0.65, ['beta']);
  const budget = a.text.length + a.path.length + 10; // room for one of them
  assert.deepEqual(
    assembleContext([a, b], budget, '').map((c) => c.path),
    ['src/b.ts'],
  );
  const shown = assembleContext([a], budget, '');
  assert.deepEqual(
    assembleContext([a, b], budget, '', shown).map((c) => c.path),
    ['src/a.ts'],
    'a near tie keeps what was shown',
  );
  assert.deepEqual(
    assembleContext([a, { ...b, score: 0.9 }], budget, '', shown).map((c) => c.path),
    ['src/b.ts'],
    'a clearly better snippet takes the place',
  );
});
