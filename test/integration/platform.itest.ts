// The platform smoke: what .github/workflows/ci.yml runs on each real runner (Windows, macOS, Linux, x64 and
// arm64) against the installed package (`node scripts/run-integration.js --vsix <file> --grep platform`), and
// what the normal suite runs here. Each test holds on every platform; where an OS behaves differently (Windows
// locks a loaded model), the test asserts that platform's behaviour.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GhostlineApi } from '../../src/extension';
import { EngineClient } from '../../src/engine/host/client';
import { childProcessConverter } from '../../src/hub/childProcessConverter';
import { FileInUseError } from '../../src/platform/lockRetry';
import { removeFolder } from '../../src/platform/folderSwap';
import { EXTENSION_ID, acceptAtAny, activeApi, returnPlaces } from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

/** The repository (its fixtures), from out/test/integration/. */
const REPO = path.resolve(__dirname, '..', '..', '..');
let api: GhostlineApi;
let extensionPath: string;
const temps: string[] = [];

before(async () => {
  api = await activeApi();
  extensionPath = vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '';
  await waitFor(() => api.loader.info !== null, 'the model to load', 60_000);
});

after(async () => {
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', process.env.GHOSTLINE_TEST_MODEL, vscode.ConfigurationTarget.Global);
  await waitFor(() => api.loader.info !== null, 'the bundled model again', 60_000);
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

test('platform: the bundled model loads from the extension folder, in a worker process, with the native runtime of this platform', async () => {
  const info = api.loader.info;
  assert.ok(info);
  assert.ok(path.resolve(info.dir).startsWith(path.resolve(extensionPath)), `${info.dir} is not inside ${extensionPath}`);
  const stats = await api.client.workerStats();
  assert.notEqual(stats.pid, process.pid, 'the worker runs in its own process');
  // Inside the editor a worker thread could meet another extension's onnxruntime library: refused.
  assert.throws(() => new EngineClient({ workerKind: 'thread' }), /only as a process/);
  // A package says which platform it is for (scripts/package.js); a development folder has no such file.
  const native = path.join(extensionPath, 'dist', 'native.json');
  if (process.env.GHOSTLINE_TEST_PACKAGED === '1') {
    assert.ok(fs.existsSync(native), 'the installed package has no dist/native.json');
    assert.equal(JSON.parse(fs.readFileSync(native, 'utf8')).target, `${process.platform}-${process.arch}`);
  } else {
    assert.ok(!fs.existsSync(native), 'a development folder must not say which platform it is for');
  }
});

test('platform: the status bar names the device; cpu reloads on the CPU; Measure Devices Again measures afresh', async () => {
  const first = api.loader.info?.device;
  assert.ok(first);
  assert.equal(first.setting, 'auto');
  assert.ok(first.reason.length > 0, 'auto says why');
  assert.match(api.status.tooltip, new RegExp(`Runs on the ${first.device === 'gpu' ? 'GPU \\(WebGPU on ' : 'CPU: '}`));
  const cfg = () => vscode.workspace.getConfiguration('ghostline');
  try {
    await cfg().update('engine.device', 'cpu', vscode.ConfigurationTarget.Global);
    await waitFor(() => api.loader.info?.device.setting === 'cpu', 'the reload on the CPU', 60_000);
    assert.deepEqual(api.loader.info?.device, { setting: 'cpu', device: 'cpu', reason: 'the device is set to cpu' });
    assert.match(api.status.tooltip, /Runs on the CPU: the device is set to cpu/);
    await acceptAtAny(returnPlaces('on_cpu'));
  } finally {
    await cfg().update('engine.device', undefined, vscode.ConfigurationTarget.Global);
    await waitFor(() => api.loader.info?.device.setting === 'auto', 'the reload with auto', 60_000);
  }
  // A GPU that opens is measured once and remembered; none (as on most CI runners) is never remembered.
  const verdicts = api.shared.deviceVerdictFile;
  assert.equal(fs.existsSync(verdicts), api.loader.info?.device.measured !== undefined);
  const loaded = api.loader.info;
  assert.equal(await vscode.commands.executeCommand('ghostline.measureDevicesAgain'), true);
  assert.notEqual(api.loader.info, loaded, 'reloaded');
  if (api.loader.info?.device.measured) assert.match(api.loader.info.device.reason, /^measured now: /);
});

test('platform: a suggestion accepted in a CRLF file keeps every line ending CRLF', async () => {
  const { editor } = await acceptAtAny(
    [
      ['double', 'print(double(2))'],
      ['area', 'print(area(2, 3))'],
      ['greet', "print(greet('Ada'))"],
    ].map(([name, call]) => ({ file: `crlf_${name}.py`, text: `def ${name}(x):\r\n    return\r\n\r\n${call}\r\n`, cursorAfter: '    return' })),
  );
  assert.equal(editor.document.eol, vscode.EndOfLine.CRLF);
  const text = editor.document.getText();
  assert.equal(text.replace(/\r\n/g, '').includes('\n'), false, `a bare LF: ${JSON.stringify(text)}`);
  assert.equal(text.replace(/\r\n/g, '').includes('\r'), false, `a bare CR: ${JSON.stringify(text)}`);
});

test('platform: Restart Engine starts a new worker process, and suggestions come from it', async () => {
  const before = (await api.client.workerStats()).pid;
  await vscode.commands.executeCommand('ghostline.restartEngine');
  await waitFor(() => api.loader.info !== null, 'the model after the restart', 60_000);
  const after = (await api.client.workerStats()).pid;
  assert.notEqual(after, before);
  await acceptAtAny(returnPlaces('restarted'));
  assert.equal((await api.client.workerStats()).pid, after, 'the suggestion came from another worker');
});

test('platform: a tiny checkpoint converts in a child process of the editor; a cancelled conversion leaves nothing behind', async () => {
  const convert = childProcessConverter(path.join(extensionPath, 'dist', 'cli.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-platform-convert-'));
  temps.push(dir);
  const from = path.join(REPO, 'test', 'fixtures', 'checkpoints', 'qwen2');
  const cancelled = path.join(dir, 'cancelled');
  const ac = new AbortController();
  const error = await convert({ from, out: cancelled, quant: 'int8', signal: ac.signal, onProgress: () => ac.abort() }).then(
    () => null,
    (e: unknown) => e,
  );
  // A tiny checkpoint may finish before the cancel lands: then the folder is whole, never half.
  if (error) {
    assert.match(String(error), /cancelled/);
    assert.deepEqual(fs.readdirSync(dir), [], `left behind: ${fs.readdirSync(dir).join(', ')}`);
  } else {
    assert.ok(fs.existsSync(path.join(cancelled, 'config.json')));
  }
  const out = path.join(dir, 'whole');
  const result = await convert({ from, out, quant: 'int8' });
  assert.ok(result);
  assert.ok(fs.readdirSync(path.join(out, 'onnx')).some((f) => f.endsWith('.onnx')));
});

test('platform: deleting the model in use: Windows keeps the folder whole with one message; elsewhere it goes and the next load says so', async () => {
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-platform-model-')), 'in-use');
  temps.push(path.dirname(copy));
  fs.cpSync(api.loader.modelDir(), copy, { recursive: true });
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', copy, vscode.ConfigurationTarget.Global);
  await waitFor(() => api.loader.info !== null && path.resolve(api.loader.info.dir) === path.resolve(copy), 'the copied model to load', 60_000);
  if (process.platform === 'win32') {
    const error = await removeFolder(copy).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof FileInUseError, `not refused as in use: ${error}`);
    assert.match(error.message, /open in another program.*Close the model in use/);
    assert.ok(fs.existsSync(path.join(copy, 'config.json')), 'the folder was left half deleted');
  } else {
    await removeFolder(copy);
    assert.ok(!fs.existsSync(copy));
    await vscode.commands.executeCommand('ghostline.restartEngine');
    await waitFor(() => api.status.current === 'error' && api.loader.info === null, 'a clear error for the deleted model', 30_000);
  }
});
