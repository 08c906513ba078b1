/**
 * A Linux machine without the Vulkan loader (no libvulkan1), made real: the engine runs in a private mount
 * namespace where the loader's library is /dev/null, with SwiftShader's driver still offered, so the loader
 * is the only thing missing. Needs root (unshare, mount): the "root" tier, run by `npm test` and CI.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../helpers';
import { swiftShaderEnv } from '../swiftShader';

const LOADERS = ['/usr/lib/x86_64-linux-gnu/libvulkan.so.1', '/lib/x86_64-linux-gnu/libvulkan.so.1', '/usr/lib64/libvulkan.so.1'];

const CHILD = `
const { Engine } = require(${JSON.stringify(path.join(ROOT, 'out', 'src', 'engine', 'worker', 'engine.js'))});
const { defaultModelDir } = require(${JSON.stringify(path.join(ROOT, 'out', 'src', 'engine', 'host', 'defaultModel.js'))});
(async () => {
  const out = {};
  for (const device of ['gpu', 'auto']) {
    const engine = await Engine.load(defaultModelDir(${JSON.stringify(ROOT)}), { device, threads: 1 });
    const r = await engine.generate('def add(a, b):\\n    return ', { temperature: 0, maxNewTokens: 4 });
    out[device] = { report: engine.info.device, text: r.text };
    await engine.dispose();
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

describe('no Vulkan loader', { skip: (process.platform !== 'linux' || process.arch !== 'x64') && 'the Vulkan loader is a linux-x64 dependency' }, () => {
  test('gpu and auto run on the CPU, say the loader is missing, and answer', () => {
    const found = swiftShaderEnv();
    // Deliberately a failure, never a skip: CI installs both, and a test that did not run must not pass.
    assert.ok('env' in found, `needs SwiftShader's ICD and the loader to hide: ${'missing' in found ? found.missing : ''}`);
    const loader = LOADERS.find((f) => fs.existsSync(f));
    assert.ok(loader, 'libvulkan1 is installed (CI installs it)');
    const real = fs.realpathSync(loader);
    const script = `mount --bind /dev/null ${real} && exec node -e "$CHILD"`;
    const stdout = execFileSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], {
      env: { ...process.env, ...found.env, CHILD },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    const out = JSON.parse(stdout) as Record<string, { report: { device: string; reason: string; setting: string }; text: string }>;
    for (const device of ['gpu', 'auto']) {
      assert.equal(out[device].report.setting, device);
      assert.equal(out[device].report.device, 'cpu');
      assert.match(out[device].report.reason, /no usable GPU: .*libvulkan1/);
      assert.ok(out[device].text.length > 0, 'the CPU answers');
    }
    assert.ok(fs.statSync(real).size > 0, 'the loader is back outside the namespace');
  });
});
