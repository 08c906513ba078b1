/**
 * The packages users install: every target's .vsix, as `npm run package -- --all` built it, read as a zip.
 * Run by `npm test` after the package step (not by test:unit: it needs the five .vsix files). The packages
 * are looked for in GHOSTLINE_VSIX_DIR, else in the repository root.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

interface VsixCheck {
  checkVsix(file: string, target: string): Promise<string[]>;
  openZip(file: string): Promise<{ names: string[]; close(): void }>;
}
interface VsixTargets {
  TARGETS: Record<string, { platform: string; arch: string; binding: string; runtime: string; gpu?: string[] }>;
  MAX_VSIX_BYTES: number;
}
const { checkVsix, openZip } = require(path.join(ROOT, 'scripts', 'vsix-check.js')) as VsixCheck;
const { TARGETS, MAX_VSIX_BYTES } = require(path.join(ROOT, 'scripts', 'vsix-targets.js')) as VsixTargets;

const dir = process.env.GHOSTLINE_VSIX_DIR ? path.resolve(process.env.GHOSTLINE_VSIX_DIR) : ROOT;
const vsix = (target: string) => path.join(dir, `ghostline-${target}.vsix`);

for (const target of Object.keys(TARGETS)) {
  test(`${target}: its own native runtime only, the bundle, the model and the grammars, nothing else`, async () => {
    const file = vsix(target);
    assert.ok(fs.existsSync(file), `${file} was not built (npm run package -- --all)`);
    assert.deepEqual(await checkVsix(file, target), []);
    assert.ok(fs.statSync(file).size <= MAX_VSIX_BYTES);
    const zip = await openZip(file);
    try {
      const t = TARGETS[target];
      const native = zip.names.filter((n) => n.includes('/onnxruntime-node/bin/'));
      assert.deepEqual(
        native.sort(),
        [t.binding, t.runtime, ...(t.gpu ?? [])].map((f) => `extension/node_modules/onnxruntime-node/bin/napi-v6/${t.platform}/${t.arch}/${f}`).sort(),
      );
      // A small package: the bundle, 10 grammars, the model, two runtime packages (the unbundled tree had 2,776).
      assert.ok(zip.names.length < 100, `${zip.names.length} files`);
    } finally {
      zip.close();
    }
  });
}

test('the check catches a package built for another platform', async () => {
  const file = vsix('linux-x64');
  assert.ok(fs.existsSync(file), `${file} was not built`);
  const problems = await checkVsix(file, 'win32-x64');
  assert.ok(
    problems.some((p) => p.includes('missing node_modules/onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime.dll')),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p.includes('another platform') && p.includes('/linux/x64/')),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p.includes('TargetPlatform="win32-x64"')),
    problems.join('\n'),
  );
});

test('universal: no native runtime, and it says it has no local engine, so the engine refuses before any worker starts', async () => {
  const file = vsix('universal');
  assert.ok(fs.existsSync(file), `${file} was not built (npm run package -- --all)`);
  assert.deepEqual(await checkVsix(file, 'universal'), []);
  const zip = await openZip(file);
  try {
    assert.deepEqual(
      zip.names.filter((n) => n.includes('/onnxruntime-node/bin/')),
      [],
    );
    assert.ok(zip.names.includes('extension/dist/worker.js'));
  } finally {
    zip.close();
  }
  // A platform package is not a universal one.
  assert.ok((await checkVsix(vsix('linux-x64'), 'universal')).length > 0);
});
