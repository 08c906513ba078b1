/**
 * Non-relative TypeScript/JavaScript imports through the project's own module mapping (tsconfig.json or
 * jsconfig.json `paths` and `baseUrl`, their `extends` chain), on real files in a temporary workspace: what
 * resolves, what wins when several patterns match, and what is left to the usual layouts.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { importSnippets } from '../../../src/completion/context/repo/importContext';
import { ModuleIndex } from '../../../src/completion/context/repo/moduleIndex';
import { SourceParser } from '../../../src/completion/context/repo/parseSource';
import { resolveImport } from '../../../src/completion/context/repo/resolveImport';
import { WorkspaceFiles } from '../../../src/platform/workspaceFiles';

const roots: string[] = [];
after(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): { root: string; write: (rel: string, text: string) => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-tsconfig-'));
  roots.push(root);
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  for (const [rel, text] of Object.entries(files)) write(rel, text);
  return { root, write };
}

const MONOREPO = {
  // What tsc accepts and JSON does not: comments and trailing commas.
  'tsconfig.base.json': `{
    // shared by every package
    "compilerOptions": {
      "baseUrl": ".",
      "paths": {
        "@shared/*": ["packages/shared/src/*", "packages/shared/legacy/*"],
        "@shared/testing/*": ["packages/testing/src/*"],
        "@config": ["packages/config/index.ts"],
      },
    },
  }`,
  'packages/app/tsconfig.json': '{ "extends": "../../tsconfig.base", "compilerOptions": { "strict": true } }',
  'packages/app/src/main.ts': "import { add } from '@shared/math';\nimport { settings } from '@config';\n\nexport const total = add(1, 2);\n",
  'packages/shared/src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
  'packages/shared/legacy/old.ts': 'export const old = 1;\n',
  'packages/testing/src/fake.ts': 'export const fake = 2;\n',
  'packages/config/index.ts': 'export const settings = { debug: false };\n',
  'packages/lib/jsconfig.json': '{ "compilerOptions": { "baseUrl": "src" } }',
  'packages/lib/src/utils/date.js': 'export function today() {\n  return new Date();\n}\n',
  'packages/lib/src/index.js': "import { today } from 'utils/date';\n",
};

test('tsconfig paths: an extended config maps patterns by their longest prefix, each target in order, exact names too', async () => {
  const { root } = workspace(MONOREPO);
  const files = new WorkspaceFiles(root);
  const from = 'packages/app/src/main.ts';
  const resolve = (specifier: string) => resolveImport(files, from, { specifier }, 'typescript');
  assert.equal(await resolve('@shared/math'), 'packages/shared/src/math.ts');
  assert.equal(await resolve('@shared/old'), 'packages/shared/legacy/old.ts', "the pattern's second target");
  assert.equal(await resolve('@shared/testing/fake'), 'packages/testing/src/fake.ts', 'the longer prefix wins');
  assert.equal(await resolve('@config'), 'packages/config/index.ts', 'an exact pattern');
  // baseUrl ".": a path from the root resolves too; a package that is not in the workspace does not.
  assert.equal(await resolve('packages/config/index'), 'packages/config/index.ts');
  assert.equal(await resolve('react'), null);
  // jsconfig.json's baseUrl in another package: the nearest config above the file is the one read.
  assert.equal(await resolveImport(files, 'packages/lib/src/index.js', { specifier: 'utils/date' }, 'javascript'), 'packages/lib/src/utils/date.js');
  assert.equal(
    await resolveImport(files, 'packages/lib/src/index.js', { specifier: '@shared/math' }, 'javascript'),
    null,
    "another project's paths do not apply",
  );
});

test('tsconfig paths: the imported declarations reach the context; a config edited on disk is read again', async () => {
  const { root, write } = workspace(MONOREPO);
  const files = new WorkspaceFiles(root);
  const index = new ModuleIndex(files, new SourceParser());
  const main = 'packages/app/src/main.ts';
  const cursor = { path: main, text: MONOREPO[main], lang: 'typescript' as const, line: 3 };
  const snippets = await importSnippets(cursor, index);
  const add = snippets.find((s) => s.names?.includes('add'));
  assert.equal(add?.path, 'packages/shared/src/math.ts');
  assert.match(add?.text ?? '', /function add\(a: number, b: number\): number/);
  assert.equal(snippets.find((s) => s.names?.includes('settings'))?.path, 'packages/config/index.ts');
  // The mapping moves: the same import now names another file.
  write('packages/shared/next/math.ts', 'export function add(x: bigint): bigint {\n  return x;\n}\n');
  write('tsconfig.base.json', '{ "compilerOptions": { "baseUrl": ".", "paths": { "@shared/*": ["packages/shared/next/*"] } } }');
  assert.equal(await resolveImport(files, main, { specifier: '@shared/math' }, 'typescript'), 'packages/shared/next/math.ts');
});

test('tsconfig paths: a config that does not parse, or extends itself, maps nothing and the usual layouts still resolve', async () => {
  const { root } = workspace({
    'tsconfig.json': '{ "compilerOptions": { "paths": ',
    'src/util.ts': 'export const u = 1;\n',
    'app/tsconfig.json': '{ "extends": "./tsconfig.json", "compilerOptions": { "paths": { "#u": ["../src/util.ts"] } } }',
    'app/main.ts': '',
  });
  const files = new WorkspaceFiles(root);
  assert.equal(await resolveImport(files, 'main.ts', { specifier: 'util' }, 'typescript'), 'src/util.ts', 'src/ as before');
  assert.equal(await resolveImport(files, 'main.ts', { specifier: '@/util' }, 'typescript'), 'src/util.ts');
  assert.equal(await resolveImport(files, 'app/main.ts', { specifier: '#u' }, 'typescript'), 'src/util.ts', 'paths relative to their config without baseUrl');
});
