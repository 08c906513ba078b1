import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { EngineClient, EngineError } from '../../src/engine/host/client';
import { explainNativeLoad, fileNamedBy, NATIVE_LOAD_ERROR } from '../../src/engine/shared/nativeLoad';
import { ROOT, TINY } from '../helpers';

// The loaders' own wordings, as Node passes them on (process.dlopen and require), one per failure a user meets.
const BINDING = '/ext/node_modules/onnxruntime-node/bin/napi-v6/x/y/onnxruntime_binding.node';
const cases: { name: string; host: { platform: string; arch: string }; message: string; file: string; hint: RegExp }[] = [
  {
    name: 'Windows without the Visual C++ runtime (error 126)',
    host: { platform: 'win32', arch: 'x64' },
    message:
      'The specified module could not be found.\r\n\\\\?\\C:\\Users\\a\\.vscode\\extensions\\ghostline\\node_modules\\onnxruntime-node\\bin\\napi-v6\\win32\\x64\\onnxruntime_binding.node',
    file: '\\\\?\\C:\\Users\\a\\.vscode\\extensions\\ghostline\\node_modules\\onnxruntime-node\\bin\\napi-v6\\win32\\x64\\onnxruntime_binding.node',
    hint: /Visual C\+\+ Redistributable.*vc_redist\.x64\.exe/,
  },
  {
    name: 'Windows on arm64 gets the arm64 redistributable',
    host: { platform: 'win32', arch: 'arm64' },
    message: 'The specified module could not be found.\r\nC:\\ext\\onnxruntime_binding.node',
    file: 'C:\\ext\\onnxruntime_binding.node',
    hint: /vc_redist\.arm64\.exe/,
  },
  {
    name: 'Windows in another language, and Wine, word error 126 their own way',
    host: { platform: 'win32', arch: 'x64' },
    message: 'Das angegebene Modul wurde nicht gefunden.\r\n\\\\?\\C:\\ext\\onnxruntime_binding.node',
    file: '\\\\?\\C:\\ext\\onnxruntime_binding.node',
    hint: /Visual C\+\+ Redistributable/,
  },
  {
    name: 'Windows with an old msvcp140.dll loaded first (error 1114)',
    host: { platform: 'win32', arch: 'x64' },
    message: 'A dynamic link library (DLL) initialization routine failed.\r\n\\\\?\\C:\\ext\\onnxruntime_binding.node',
    file: '\\\\?\\C:\\ext\\onnxruntime_binding.node',
    hint: /older Visual C\+\+ runtime.*PATH/,
  },
  {
    name: 'macOS older than the binaries (dyld)',
    host: { platform: 'darwin', arch: 'arm64' },
    message:
      'dlopen(/ext/onnxruntime_binding.node, 0x0001): Library not loaded: @rpath/libonnxruntime.1.dylib\n  Referenced from: <UUID> /ext/onnxruntime_binding.node (built for macOS 14.0 which is newer than running OS)',
    file: '@rpath/libonnxruntime.1.dylib',
    hint: /older than the local engine needs.*ghostline\.backend/,
  },
  {
    name: 'an Intel Mac has no build',
    host: { platform: 'darwin', arch: 'x64' },
    message: "Cannot find module '../bin/napi-v6/darwin/x64/onnxruntime_binding.node'\nRequire stack:\n- /ext/node_modules/onnxruntime-node/dist/binding.js",
    file: '../bin/napi-v6/darwin/x64/onnxruntime_binding.node',
    hint: /no build for darwin-x64 \(Intel Macs.*ghostline\.backend/,
  },
  {
    name: 'VS Code for Intel under Rosetta loads an arm64 file',
    host: { platform: 'darwin', arch: 'x64' },
    message:
      "dlopen(/ext/onnxruntime_binding.node, 0x0001): tried: '/ext/onnxruntime_binding.node' (mach-o file, but is an incompatible architecture (have 'arm64', need 'x86_64'))",
    file: '/ext/onnxruntime_binding.node',
    hint: /Apple silicon build of VS Code/,
  },
  {
    name: 'Linux with an old glibc',
    host: { platform: 'linux', arch: 'x64' },
    message: "/lib/x86_64-linux-gnu/libm.so.6: version `GLIBC_2.29' not found (required by /ext/libonnxruntime.so.1)",
    file: '/ext/libonnxruntime.so.1',
    hint: /glibc, libstdc\+\+\) is older/,
  },
  {
    name: 'Linux: the runtime library was removed',
    host: { platform: 'linux', arch: 'x64' },
    message: 'libonnxruntime.so.1: cannot open shared object file: No such file or directory',
    file: 'libonnxruntime.so.1',
    hint: /missing: reinstall Ghostline/,
  },
  {
    name: 'Linux: a system library is missing',
    host: { platform: 'linux', arch: 'arm64' },
    message: 'libstdc++.so.6: cannot open shared object file: No such file or directory',
    file: 'libstdc++.so.6',
    hint: /system library libstdc\+\+\.so\.6 is missing/,
  },
  {
    name: 'Linux: a damaged file',
    host: { platform: 'linux', arch: 'x64' },
    message: '/ext/bin/napi-v6/linux/x64/libonnxruntime.so.1: file too short',
    file: '/ext/bin/napi-v6/linux/x64/libonnxruntime.so.1',
    hint: /damaged: reinstall/,
  },
  {
    name: 'anything else keeps the message and says what to try',
    host: { platform: 'freebsd', arch: 'x64' },
    message: 'something nobody has seen',
    file: BINDING,
    hint: /Reinstall Ghostline; if it happens again, report/,
  },
];

for (const c of cases) {
  test(`native load failure explained: ${c.name}`, () => {
    const f = explainNativeLoad(new Error(c.message), BINDING, c.host);
    assert.equal(f.file, c.file);
    assert.match(f.hint, c.hint);
    assert.equal(f.osMessage, c.message.split(/\r?\n/)[0]);
  });
}

test('a message that names no file falls back to the binding', () => {
  assert.equal(fileNamedBy('boom', BINDING), BINDING);
});

// The real thing: the bundled worker next to a copy of onnxruntime-node whose library is missing or damaged,
// as an antivirus or a broken download leaves it. The worker must answer with the typed error and stay up.
const BUNDLED_WORKER = path.join(ROOT, 'dist', 'worker.js');
const ORT = path.join(ROOT, 'node_modules', 'onnxruntime-node');
const temps: string[] = [];
after(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

/** An extension folder with dist/worker.js and onnxruntime-node without its library; `breakIt` changes its native folder. */
function brokenExtension(breakIt: (nativeDir: string) => void): string {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-native-'));
  temps.push(ext);
  fs.mkdirSync(path.join(ext, 'dist'));
  fs.copyFileSync(BUNDLED_WORKER, path.join(ext, 'dist', 'worker.js'));
  const ort = path.join(ext, 'node_modules', 'onnxruntime-node');
  fs.mkdirSync(ort, { recursive: true });
  fs.copyFileSync(path.join(ORT, 'package.json'), path.join(ort, 'package.json'));
  fs.cpSync(path.join(ORT, 'dist'), path.join(ort, 'dist'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules', 'onnxruntime-common'), path.join(ext, 'node_modules', 'onnxruntime-common'), 'dir');
  const nativeRel = path.join('bin', 'napi-v6', process.platform, process.arch);
  const native = path.join(ort, nativeRel);
  fs.mkdirSync(native, { recursive: true });
  // The binding is copied, not linked: Node loads a linked addon from its real path, where the library is whole.
  // The library itself is left for `breakIt` (every case here removes or damages it).
  fs.copyFileSync(path.join(ORT, nativeRel, 'onnxruntime_binding.node'), path.join(native, 'onnxruntime_binding.node'));
  breakIt(native);
  return ext;
}

async function loadFailure(ext: string): Promise<EngineError> {
  const client = new EngineClient({ workerPath: path.join(ext, 'dist', 'worker.js'), onWorkerOutput: () => undefined });
  try {
    const first = await client.load(TINY, { threads: 1 }).then(
      () => assert.fail('the model loaded without its native library'),
      (e: unknown) => e,
    );
    assert.ok(first instanceof EngineError);
    // The worker is still there and answers the next load the same way (no "worker exited").
    const second = await client.load(TINY, { threads: 1 }).then(
      () => assert.fail('the second load succeeded'),
      (e: unknown) => e,
    );
    assert.ok(second instanceof EngineError);
    assert.equal(second.name, NATIVE_LOAD_ERROR);
    return first;
  } finally {
    await client.dispose();
  }
}

const LIB = process.platform === 'win32' ? 'onnxruntime.dll' : process.platform === 'darwin' ? 'libonnxruntime.1.dylib' : 'libonnxruntime.so.1';

test('a removed native library: the worker answers NativeLoadError naming the library', async () => {
  const err = await loadFailure(brokenExtension(() => undefined));
  assert.equal(err.name, NATIVE_LOAD_ERROR);
  assert.ok(err.message.includes(LIB), err.message);
  assert.match(err.message, /did not load: .*\(file: .*\)\. .*reinstall Ghostline/i);
});

test('a damaged native library: NativeLoadError says the file is damaged', async () => {
  const err = await loadFailure(brokenExtension((dir) => fs.writeFileSync(path.join(dir, LIB), 'not a shared library')));
  assert.equal(err.name, NATIVE_LOAD_ERROR);
  assert.ok(err.message.includes(LIB), err.message);
  assert.match(err.message, /damaged: reinstall Ghostline/);
});

test('no build for this platform: NativeLoadError says so and offers a team server', async () => {
  const err = await loadFailure(brokenExtension((dir) => fs.rmSync(dir, { recursive: true })));
  assert.match(err.message, new RegExp(`no build for ${process.platform}-${process.arch}.*ghostline\\.backend`));
});

test('a worker that dies says its last words: the exit message and the log carry what it wrote to stderr', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-dying-'));
  temps.push(dir);
  const script = path.join(dir, 'worker.js');
  fs.writeFileSync(script, "process.stderr.write('first words\\nfatal: out of ideas\\n'); process.exit(3);\n");
  const lines: string[] = [];
  const client = new EngineClient({ workerPath: script, onWorkerOutput: (l) => lines.push(l) });
  const err = await client.load(TINY).then(
    () => assert.fail('a dying worker loaded a model'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof EngineError);
  assert.equal(err.name, 'WorkerDied');
  assert.match(err.message, /exited \(code 3\); its last output: first words \| fatal: out of ideas$/);
  assert.deepEqual(lines, ['first words', 'fatal: out of ideas']);
  await client.dispose();
});
