/**
 * Python imports of another subproject of the workspace (a monorepo's `libs/billing/src/billing`, installed
 * in development mode where it runs): found where the workspace holds that top-level package, on real files.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { resolveImport } from '../../../src/completion/context/repo/resolveImport';
import { WorkspaceFiles } from '../../../src/platform/workspaceFiles';

const FILES: Record<string, string> = {
  'libs/billing/pyproject.toml': '[project]\nname = "billing"\n',
  'libs/billing/src/billing/__init__.py': 'from .invoice import Invoice\n',
  'libs/billing/src/billing/invoice.py': 'class Invoice:\n    def total(self) -> int:\n        return 0\n',
  'libs/billing/src/billing/tax/__init__.py': '',
  'libs/billing/src/billing/tax/rates.py': 'VAT = 0.2\n',
  'libs/textkit/textkit.py': 'def slug(s: str) -> str:\n    return s.lower()\n',
  // Two subprojects with a top-level package of the same name.
  'services/api/app/main.py': 'from billing import Invoice\nfrom billing.tax.rates import VAT\nimport textkit\nimport requests\n',
  'services/api/app/__init__.py': '',
  'services/worker/app/__init__.py': '',
  'services/worker/app/jobs.py': 'JOBS = []\n',
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-pyroots-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
for (const [rel, text] of Object.entries(FILES)) {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

test("python: a top-level package of another subproject resolves where the workspace holds it; the file's own project first", async () => {
  const files = new WorkspaceFiles(root);
  const resolve = (from: string, specifier: string) => resolveImport(files, from, { specifier }, 'python');
  const main = 'services/api/app/main.py';
  assert.equal(await resolve(main, 'billing'), 'libs/billing/src/billing/__init__.py');
  assert.equal(await resolve(main, 'billing.tax.rates'), 'libs/billing/src/billing/tax/rates.py');
  assert.equal(await resolve(main, 'textkit'), 'libs/textkit/textkit.py', 'a single-file module');
  assert.equal(await resolve(main, 'requests'), null, 'a package that is not in the workspace');
  // Two subprojects each have a top-level `app`: the importing file's own, found above it, comes first.
  assert.equal(await resolve('services/worker/app/jobs.py', 'app.jobs'), 'services/worker/app/jobs.py');
});

test('the package scans of both languages share one listing of the workspace, kept between resolutions', async () => {
  const disk = new WorkspaceFiles(root);
  let listings = 0;
  const files = {
    read: (p: string) => disk.read(p),
    isFile: (p: string) => disk.isFile(p),
    stamp: (p: string) => disk.stamp(p),
    list: (limit: number, near?: string) => {
      listings++;
      return disk.list(limit, near);
    },
  };
  assert.equal(await resolveImport(files, 'services/api/app/main.py', { specifier: 'billing' }, 'python'), 'libs/billing/src/billing/__init__.py');
  assert.equal(await resolveImport(files, 'services/api/app/main.ts', { specifier: '@acme/none' }, 'typescript'), null);
  assert.equal(await resolveImport(files, 'services/api/app/main.py', { specifier: 'textkit' }, 'python'), 'libs/textkit/textkit.py');
  assert.equal(listings, 1);
});
