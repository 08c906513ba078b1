/** The workspace as the context providers read it: bounded, inside the root, and nothing that is not source text. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { MAX_CONTEXT_FILE_BYTES, WorkspaceFiles } from '../../src/platform/workspaceFiles';

function workspace(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-ws-'));
}

test('binary files, files over the size limit, paths out of the workspace and links out of it read as missing', async () => {
  const root = workspace();
  const outside = workspace();
  fs.writeFileSync(path.join(root, 'ok.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(root, 'bin.ts'), Buffer.from([0x65, 0x78, 0x00, 0x01, 0x02]));
  fs.writeFileSync(path.join(root, 'huge.ts'), `export const big = "${'x'.repeat(MAX_CONTEXT_FILE_BYTES)}";\n`);
  fs.writeFileSync(path.join(outside, 'secret.ts'), 'export const token = "s3cret";\n');
  fs.symlinkSync(path.join(outside, 'secret.ts'), path.join(root, 'link.ts'));
  const files = new WorkspaceFiles(root);
  assert.equal(await files.read('ok.ts'), 'export const a = 1;\n');
  assert.equal(await files.read('bin.ts'), undefined);
  assert.equal(await files.read('huge.ts'), undefined);
  assert.equal(await files.read(`../${path.basename(outside)}/secret.ts`), undefined);
  assert.equal(await files.read(path.join(outside, 'secret.ts')), undefined, 'an absolute path');
  assert.equal(await files.read('link.ts'), undefined, 'a symlink out of the workspace');
  assert.equal(await files.isFile('link.ts'), false);
  assert.equal(await files.isFile('ok.ts'), true);
});

test('a symlink loop and 100,000 files: the scan stays bounded and returns', async () => {
  const root = workspace();
  fs.mkdirSync(path.join(root, 'loop'));
  fs.symlinkSync(path.join(root, 'loop'), path.join(root, 'loop', 'again'));
  fs.symlinkSync(root, path.join(root, 'up'));
  fs.mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
  fs.writeFileSync(path.join(root, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  for (let d = 0; d < 100; d++) {
    const dir = path.join(root, `pkg${String(d).padStart(3, '0')}`);
    fs.mkdirSync(dir);
    for (let f = 0; f < 1000; f++) fs.closeSync(fs.openSync(path.join(dir, `m${f}.ts`), 'w'));
  }
  const files = new WorkspaceFiles(root);
  const listed = await files.list(200, 'pkg050/m1.ts');
  assert.equal(listed.length, 200);
  assert.ok(
    listed.every((p) => p.startsWith('pkg050/')),
    'the folder of the current file first',
  );
  assert.ok(!listed.some((p) => p.includes('node_modules') || p.includes('loop/')));
  const all = await files.list(1_000_000);
  assert.ok(all.length < 100_000, `a scan visits a bounded number of entries (listed ${all.length})`);
  assert.equal(await files.read('loop/again/again/x.ts'), undefined);
  fs.rmSync(root, { recursive: true, force: true });
});
