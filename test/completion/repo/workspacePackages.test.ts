/**
 * Bare imports of a monorepo's own packages (npm, yarn and pnpm workspaces), which node resolves through
 * links in node_modules that Ghostline does not read: found by the package.json names of the workspace, on
 * real files in a temporary workspace.
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

const PAGE =
  "import { createUser } from '@acme/core';\nimport type { User } from '@acme/core/models/user';\nimport { slug } from 'acme-text';\n\nexport const u = createUser('a');\n";

const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'acme', private: true, workspaces: ['packages/*', 'apps/*'] }),
  // Built to dist/, sources in src/: the entry's source is what the context shows.
  'packages/core/package.json': JSON.stringify({ name: '@acme/core', main: 'dist/index.js', types: 'dist/index.d.ts' }),
  'packages/core/src/index.ts': "export { createUser } from './users';\n",
  'packages/core/src/users.ts':
    "import type { User } from './models/user';\n\nexport function createUser(name: string): User {\n  return { name, id: 0 };\n}\n",
  'packages/core/src/models/user.ts': 'export interface User {\n  id: number;\n  name: string;\n}\n',
  // An `exports` map whose "." names the source itself.
  'packages/text/package.json': JSON.stringify({ name: 'acme-text', exports: { '.': { types: './lib/text.ts', default: './lib/text.js' } } }),
  'packages/text/lib/text.ts': 'export function slug(s: string): string {\n  return s.toLowerCase();\n}\n',
  // `exports` as conditions alone (the "." entry), and a subpath pattern to built files.
  'packages/ui/package.json': JSON.stringify({
    name: '@acme/ui',
    exports: { import: './dist/main.mjs', types: './dist/main.d.ts' },
  }),
  'packages/ui/src/main.ts': 'export const theme = "dark";\n',
  'packages/icons/package.json': JSON.stringify({ name: '@acme/icons', exports: { '.': './index.js', './glyphs/*': { types: './dist/svg/*.d.ts' } } }),
  'packages/icons/src/svg/arrow.ts': 'export const arrow = "<svg/>";\n',
  'apps/web/package.json': JSON.stringify({ name: '@acme/web', dependencies: { '@acme/core': '*' }, devDependencies: { 'left-pad': '^1.3.0' } }),
  'apps/web/src/page.ts': PAGE,
};

const roots: string[] = [];
after(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function workspace(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-packages-'));
  roots.push(root);
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

test("workspace packages: a bare import of the monorepo's own package resolves to its source entry or subpath", async () => {
  const files = new WorkspaceFiles(workspace());
  const resolve = (specifier: string) => resolveImport(files, 'apps/web/src/page.ts', { specifier }, 'typescript');
  assert.equal(await resolve('@acme/core'), 'packages/core/src/index.ts', 'dist/index.js built from src/index.ts');
  assert.equal(await resolve('@acme/core/models/user'), 'packages/core/src/models/user.ts', 'a subpath under src/');
  assert.equal(await resolve('acme-text'), 'packages/text/lib/text.ts', "exports['.'].types");
  assert.equal(await resolve('@acme/ui'), 'packages/ui/src/main.ts', 'exports as conditions: the "." entry, built from src/');
  assert.equal(await resolve('@acme/icons/glyphs/arrow'), 'packages/icons/src/svg/arrow.ts', 'an exports subpath pattern, built from src/');
  assert.equal(await resolve('@acme/missing'), null);
  assert.equal(await resolve('@acme'), null, 'a scope alone names no package');
  assert.equal(await resolve('react'), null, 'a package from the registry is not in the workspace');
});

test("workspace packages: the imported names' declarations reach the context, through the entry's re-export", async () => {
  const files = new WorkspaceFiles(workspace());
  const snippets = await importSnippets({ path: 'apps/web/src/page.ts', text: PAGE, lang: 'typescript', line: 4 }, new ModuleIndex(files, new SourceParser()));
  const where = (name: string) => snippets.find((s) => s.names?.includes(name));
  assert.equal(where('createUser')?.path, 'packages/core/src/users.ts');
  assert.match(where('createUser')?.text ?? '', /function createUser\(name: string\): User/);
  assert.equal(where('User')?.path, 'packages/core/src/models/user.ts');
  assert.equal(where('slug')?.path, 'packages/text/lib/text.ts');
});

test('a package the nearest package.json declares, and a node built-in, are not looked for in the workspace', async () => {
  const disk = new WorkspaceFiles(workspace());
  let checks = 0;
  const files = {
    read: (p: string) => disk.read(p),
    stamp: (p: string) => disk.stamp(p),
    list: (limit: number, near?: string) => disk.list(limit, near),
    isFile: (p: string) => {
      checks++;
      return disk.isFile(p);
    },
  };
  const checked = async (from: string, specifier: string) => {
    checks = 0;
    const found = await resolveImport(files, from, { specifier }, 'typescript');
    return { found, checks };
  };
  assert.deepEqual(await checked('apps/web/src/page.ts', 'left-pad'), { found: null, checks: 0 }, 'apps/web declares it: node_modules has it');
  assert.deepEqual(await checked('apps/web/src/page.ts', 'node:fs'), { found: null, checks: 0 });
  // Not declared where the import is: the usual layouts are still tried (a package-local path may be meant).
  const undeclared = await checked('packages/core/src/users.ts', 'left-pad');
  assert.equal(undeclared.found, null);
  assert.ok(undeclared.checks > 10, String(undeclared.checks));
  // A workspace package, declared as a dependency or not, still resolves to its sources.
  assert.equal((await checked('apps/web/src/page.ts', '@acme/core')).found, 'packages/core/src/index.ts');
});
