// --device on the CLI: the same choice as ghostline.engine.device, through the worker process. The GPU is
// made absent for real (VK_ICD_FILENAMES at nothing: the Vulkan loader finds no driver, Dawn no adapter).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-cli-cache-'));
const NO_GPU = { ...process.env, VK_ICD_FILENAMES: path.join(cache, 'no-such-icd.json'), XDG_RUNTIME_DIR: cache, XDG_CACHE_HOME: cache };
const generate = (...extra: string[]) =>
  spawnSync(
    process.execPath,
    [CLI, 'generate', '--prompt', 'def add(a, b):\n    return ', '--max-new-tokens', '4', '--temperature', '0', '--threads', '1', ...extra],
    {
      encoding: 'utf8',
      env: NO_GPU,
    },
  );

test('generate --device cpu runs on the CPU and says so on stderr', () => {
  const cpu = generate('--device', 'cpu', '--json');
  assert.equal(cpu.status, 0, cpu.stderr);
  assert.match(cpu.stderr, /^ghostline: note: runs on the CPU: the device is set to cpu$/m);
  assert.ok(JSON.parse(cpu.stdout).text.length > 0);
});

test('generate --device gpu and auto with no GPU: the CPU answer, one note why, nothing remembered', {
  skip: process.platform !== 'linux' && 'Vulkan ICD selection is a Linux loader feature',
}, () => {
  const cpu = generate('--device', 'cpu', '--json');
  for (const device of ['gpu', 'auto']) {
    const r = generate('--device', device, '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^ghostline: note: runs on the CPU: no usable GPU/m);
    assert.equal(JSON.parse(r.stdout).text, JSON.parse(cpu.stdout).text, 'the same answer as on the CPU');
  }
  assert.equal(fs.existsSync(path.join(cache, 'ghostline', 'device-verdicts.json')), false, 'a failed open is not remembered');
});

test('--device with a value that is not a device is refused with the allowed values', () => {
  const r = generate('--device', 'tpu');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--device must be one of auto, cpu, gpu, got "tpu"/);
});

test('serve-stdio --device cpu answers requests', async () => {
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--device', 'cpu', '--threads', '1'], { stdio: ['pipe', 'pipe', 'pipe'], env: NO_GPU });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const line = new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
  });
  child.stdin.write(`${JSON.stringify({ id: 1, prompt: 'def add(a, b):\n    return ', max_new_tokens: 4 })}\n`);
  const reply = JSON.parse(await line);
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(reply.id, 1);
  assert.ok(typeof reply.text === 'string' && reply.text.length > 0, JSON.stringify(reply));
  assert.match(stderr, /runs on the CPU: the device is set to cpu/);
});
