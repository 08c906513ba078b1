import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * What a package's native library needs from the machine, written into dist/native.json by `npm run package`
 * from the binaries' own headers (scripts/native-facts.js). A development folder has no such file: nothing is
 * checked there, and a failed load is still explained by the worker (NativeLoadError).
 */
export interface NativeRequirements {
  /** `<platform>-<arch>`, or `universal`: the package without a local engine, for every other platform. */
  target: string;
  /** false in the universal package. */
  localEngine?: boolean;
  /** LC_BUILD_VERSION minos of the binding and the library (darwin). */
  minMacOS?: string | null;
  /** Newest glibc / libstdc++ symbol versions asked for (linux). */
  glibc?: string | null;
  glibcxx?: string | null;
  /** The Visual C++ runtime DLLs imported (win32): named in the hint when the load fails. */
  vcRuntimeDlls?: string[];
}

export interface HostFacts {
  platform: string;
  arch: string;
  /** os.release(): the Darwin kernel version on macOS. */
  osRelease: string;
  /** The C library's version on Linux; null for a C library other than glibc (musl). */
  glibc: string | null;
}

export function readNativeRequirements(distDir: string): NativeRequirements | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(distDir, 'native.json'), 'utf8')) as NativeRequirements;
  } catch {
    return null;
  }
}

export function thisHost(): HostFacts {
  const header = process.platform === 'linux' ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header : undefined;
  return { platform: process.platform, arch: process.arch, osRelease: os.release(), glibc: header?.glibcVersionRuntime ?? null };
}

/** macOS's version from its Darwin kernel's: Darwin 20-24 are macOS 11-15, Darwin 25 is macOS 26. */
export function macOSVersionOf(darwinRelease: string): string | null {
  const m = /^(\d+)\.(\d+)/.exec(darwinRelease);
  if (!m) return null;
  const major = Number(m[1]);
  if (major < 20) return `10.${major - 4}`; // Darwin 19 is macOS 10.15
  return `${major >= 25 ? major + 1 : major - 9}.${m[2]}`;
}

function olderThan(have: string, need: string): boolean {
  const a = have.split('.').map(Number);
  const b = need.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

const SERVER = 'Set "ghostline.backend" to a team server (llama.cpp, OpenAI-compatible or Ollama) to use Ghostline here.';

/**
 * Why the package's native library cannot load on `host`, checked before the worker starts; null when nothing
 * known stands in the way. The message is what the user sees, so it names the versions and the way out.
 */
export function unmetRequirement(req: NativeRequirements, host: HostFacts): string | null {
  const want = req.target;
  if (req.localEngine === false || want === 'universal') {
    const intelMac = host.platform === 'darwin' && host.arch === 'x64' ? ' (Intel Macs: only Apple silicon has one)' : '';
    return `Ghostline has no local engine for ${host.platform}-${host.arch}${intelMac}, so this package comes without one. ${SERVER}`;
  }
  if (want !== `${host.platform}-${host.arch}`) {
    return `this is Ghostline's package for ${want}, and this machine is ${host.platform}-${host.arch}: install the package for this platform. ${SERVER}`;
  }
  if (host.platform === 'darwin' && req.minMacOS) {
    const have = macOSVersionOf(host.osRelease);
    if (have && olderThan(have, req.minMacOS)) {
      return `the local engine needs macOS ${req.minMacOS} or later, and this Mac runs macOS ${have}. ${SERVER}`;
    }
  }
  if (host.platform === 'linux' && req.glibc) {
    if (host.glibc === null) return `the local engine needs glibc ${req.glibc} or later; this Linux uses another C library (musl?). ${SERVER}`;
    if (olderThan(host.glibc, req.glibc)) return `the local engine needs glibc ${req.glibc} or later, and this Linux has ${host.glibc}. ${SERVER}`;
  }
  return null;
}
