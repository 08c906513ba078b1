/**
 * What the shipped native binaries need, read from their own headers (scripts/native-facts.js) for every
 * target on this one machine, and the engine's check of it before the worker starts.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { EngineClient, EngineError } from '../../src/engine/host/client';
import { NATIVE_LOAD_ERROR } from '../../src/engine/shared/nativeLoad';
import { macOSVersionOf, unmetRequirement, type HostFacts } from '../../src/engine/shared/nativeRequirements';
import { ROOT, TINY } from '../helpers';

type Facts = {
  format: string;
  machine: string;
  needed?: string[];
  glibc?: string;
  minMacOS?: string;
  dylibs?: string[];
  imports?: string[];
  delayImports?: string[];
  signed?: boolean;
};
interface NativeFactsModule {
  readFacts(buf: Buffer): Facts;
  requirementsOf(a: Facts, b: Facts): Record<string, unknown>;
  compareVersions(a: string, b: string): number;
}
const { readFacts, requirementsOf, compareVersions } = require(path.join(ROOT, 'scripts', 'native-facts.js')) as NativeFactsModule;
const native = (platform: string, arch: string, file: string) =>
  readFacts(fs.readFileSync(path.join(ROOT, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6', platform, arch, file)));

test('Linux: the machine, the libraries each file links, and the newest glibc it asks for', () => {
  for (const arch of ['x64', 'arm64']) {
    const binding = native('linux', arch, 'onnxruntime_binding.node');
    const lib = native('linux', arch, 'libonnxruntime.so.1');
    assert.equal(binding.machine, arch);
    assert.equal(lib.machine, arch);
    assert.ok(binding.needed?.includes('libonnxruntime.so.1'), `${binding.needed}`);
    assert.ok(lib.needed?.includes('libc.so.6'));
    const req = requirementsOf(binding, lib);
    assert.match(String(req.glibc), /^2\.\d+$/);
    assert.ok(compareVersions(String(req.glibc), '2.17') >= 0);
  }
});

test('macOS: the minimum macOS of the binding and the library, and the binding loads the library by @rpath', () => {
  const binding = native('darwin', 'arm64', 'onnxruntime_binding.node');
  const lib = native('darwin', 'arm64', 'libonnxruntime.1.dylib');
  assert.equal(binding.machine, 'arm64');
  assert.match(String(binding.minMacOS), /^\d+\.\d+/);
  assert.ok(binding.dylibs?.includes('@rpath/libonnxruntime.1.dylib'), `${binding.dylibs}`);
  assert.ok(lib.dylibs?.includes('/usr/lib/libSystem.B.dylib'));
  const req = requirementsOf(binding, lib);
  // The newer of the two minimums decides.
  assert.equal(req.minMacOS, [binding.minMacOS, lib.minMacOS].sort((a, b) => compareVersions(String(a), String(b))).at(-1));
});

test('Windows: the Visual C++ runtime DLLs the binding and onnxruntime.dll import, and their signatures', () => {
  for (const arch of ['x64', 'arm64']) {
    const binding = native('win32', arch, 'onnxruntime_binding.node');
    const dll = native('win32', arch, 'onnxruntime.dll');
    assert.equal(binding.machine, arch);
    assert.ok(binding.imports?.includes('onnxruntime.dll'));
    // node-gyp's delay-load hook: the binding binds to whichever executable loads it (Code.exe run as Node).
    assert.ok(binding.delayImports?.some((d) => d.toLowerCase() === 'node.exe'));
    const req = requirementsOf(binding, dll) as { vcRuntimeDlls: string[] };
    assert.ok(
      req.vcRuntimeDlls.some((d) => /^msvcp140\.dll$/i.test(d)),
      `${req.vcRuntimeDlls}`,
    );
    assert.ok(req.vcRuntimeDlls.some((d) => /^vcruntime140\.dll$/i.test(d)));
    assert.equal(new Set(req.vcRuntimeDlls.map((d) => d.toLowerCase())).size, req.vcRuntimeDlls.length);
    assert.equal(binding.signed, true);
    assert.equal(dll.signed, true);
  }
});

test('a file that is no binary is refused with a message', () => {
  assert.throws(() => readFacts(Buffer.from('just text, long enough to have a header of sixty-four bytes.....')), /not an ELF, Mach-O or PE/);
});

test("macOS's version from the Darwin kernel's", () => {
  assert.equal(macOSVersionOf('22.6.0'), '13.6');
  assert.equal(macOSVersionOf('23.0.0'), '14.0');
  assert.equal(macOSVersionOf('24.1.0'), '15.1');
  assert.equal(macOSVersionOf('25.0.0'), '26.0');
  assert.equal(macOSVersionOf('19.6.0'), '10.15');
  assert.equal(macOSVersionOf('nonsense'), null);
});

const mac = (release: string): HostFacts => ({ platform: 'darwin', arch: 'arm64', osRelease: release, glibc: null });
const linux = (glibc: string | null): HostFacts => ({ platform: 'linux', arch: 'x64', osRelease: '6.1.0', glibc });

test('an older macOS, glibc or another C library is named before the worker starts; a new enough one passes', () => {
  const darwin = { target: 'darwin-arm64', minMacOS: '14.0' };
  assert.match(String(unmetRequirement(darwin, mac('22.6.0'))), /needs macOS 14\.0 or later, and this Mac runs macOS 13\.6.*ghostline\.backend/);
  assert.equal(unmetRequirement(darwin, mac('23.0.0')), null);
  assert.equal(unmetRequirement(darwin, mac('25.2.0')), null);
  const gnu = { target: 'linux-x64', glibc: '2.28' };
  assert.match(String(unmetRequirement(gnu, linux('2.27'))), /needs glibc 2\.28 or later, and this Linux has 2\.27/);
  assert.equal(unmetRequirement(gnu, linux('2.28')), null);
  assert.equal(unmetRequirement(gnu, linux('2.36')), null);
  assert.match(String(unmetRequirement(gnu, linux(null))), /another C library \(musl\?\)/);
  assert.match(String(unmetRequirement(gnu, mac('23.0.0'))), /package for linux-x64, and this machine is darwin-arm64/);
  // The universal package (every platform without its own, such as Intel Macs) has no local engine.
  const intel: HostFacts = { platform: 'darwin', arch: 'x64', osRelease: '23.0.0', glibc: null };
  assert.match(String(unmetRequirement({ target: 'universal', localEngine: false }, intel)), /no local engine for darwin-x64 \(Intel Macs.*ghostline\.backend/);
});

test("a package for another platform is refused before any worker starts, with the engine's typed error", async () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-dist-'));
  try {
    const other = process.platform === 'win32' ? 'linux-x64' : 'win32-x64';
    fs.writeFileSync(path.join(dist, 'native.json'), JSON.stringify({ target: other }));
    // No worker script at all: had the client started one, the error would be a dead worker, not this.
    const client = new EngineClient({ workerPath: path.join(dist, 'worker.js') });
    const err = await client.load(TINY).then(
      () => assert.fail('loaded'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof EngineError);
    assert.equal(err.name, NATIVE_LOAD_ERROR);
    assert.match(err.message, new RegExp(`package for ${other}`));
    await client.dispose();
  } finally {
    fs.rmSync(dist, { recursive: true, force: true });
  }
});
