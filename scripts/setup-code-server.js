#!/usr/bin/env node
// Installs what the end-to-end tests and `npm start` need to run a real VS Code without a desktop:
// code-server (VS Code in the browser; its extension host is the real Node.js one) into .e2e/code-server/,
// plus playwright-core there as a fallback when the project's devDependency is not installed.
//
// Offline-friendly: only the npm registry (and Debian apt for system packages) is used.
//   - @vscode/ripgrep's postinstall downloads ripgrep from GitHub; it first looks in a cache folder under
//     os.tmpdir(), so a tarball of the system's `rg` is placed there (TMPDIR points into .e2e/ while installing).
//   - node-gyp gets Node's headers from the local Node installation (npm_config_nodedir), never from the net.
//   - npm 11 blocks dependency install scripts unless allowed: the exact packages that must build or
//     unpack something are allowed (package.json `allowScripts` here, and a project .npmrc for each nested
//     `npm install` that code-server's postinstall does in lib/vscode and lib/vscode/extensions).
//
// Idempotent: once done, a marker file makes a second run take milliseconds.
// Usage: node scripts/setup-code-server.js [--force] [--verbose] [--no-apt]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync, spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const E2E_DIR = path.join(ROOT, '.e2e');
const CS_DIR = path.join(E2E_DIR, 'code-server');
const INSTALL_TMP = path.join(E2E_DIR, 'tmp');
const MARKER = path.join(CS_DIR, '.ghostline-setup.json');
const LOG_FILE = path.join(E2E_DIR, 'setup-code-server.log');

const CODE_SERVER_VERSION = '4.100.3'; // VS Code 1.100.3; the last code-server that declares Node 20
const PLAYWRIGHT_CORE_VERSION = '1.65.1';
// @vscode/ripgrep as pinned in code-server 4.100.3's lib/vscode/npm-shrinkwrap.json, and the ripgrep
// release its lib/postinstall.js asks for (VERSION there).
const VSCODE_RIPGREP_VERSION = '1.15.11';
const RIPGREP_RELEASE = 'v13.0.0-10';

// Dependencies whose install scripts must run. Outer project: code-server itself and argon2 (one of its
// dependencies). Nested installs: hasInstallScript in code-server's lib/vscode/npm-shrinkwrap.json and
// lib/vscode/extensions/npm-shrinkwrap.json, pinned as there.
const OUTER_ALLOWED_SCRIPTS = { [`code-server@${CODE_SERVER_VERSION}`]: true, argon2: true };
const NESTED_ALLOWED_SCRIPTS = [
  // lib/vscode
  '@parcel/watcher@2.5.1',
  '@vscode/deviceid@0.1.1',
  `@vscode/ripgrep@${VSCODE_RIPGREP_VERSION}`,
  '@vscode/spdlog@0.15.1',
  '@vscode/windows-ca-certs@0.3.3',
  '@vscode/windows-process-tree@0.6.0',
  '@vscode/windows-registry@1.1.0',
  'kerberos@2.1.1',
  'native-watchdog@1.4.2',
  'node-pty@1.1.0-beta33',
  // lib/vscode/extensions
  'esbuild@0.25.0',
];

// Files that only exist when the install scripts really ran.
const EXPECTED_FILES = [
  'node_modules/code-server/out/node/entry.js',
  'node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg',
  'node_modules/code-server/lib/vscode/node_modules/node-pty/build/Release/pty.node',
  'node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node',
  'node_modules/code-server/lib/vscode/node_modules/kerberos/build/Release/kerberos.node',
  'node_modules/code-server/lib/vscode/node_modules/native-watchdog/build/Release/watchdog.node',
  'node_modules/code-server/lib/vscode/node_modules.asar',
  'node_modules/code-server/lib/vscode/extensions/node_modules',
  'node_modules/playwright-core/package.json',
];

// Debian packages: chromium drives the browser tests; the others build code-server's native modules.
const APT_PACKAGES = ['chromium', 'ripgrep', 'libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'pkg-config', 'build-essential', 'python3'];

const KEEP_NPM_ENV =
  /^npm_config_(registry|cache|(https?_)?proxy|noproxy|no_proxy|cafile|ca|strict_ssl|userconfig|globalconfig|fetch_retr\w*|fetch_timeout|prefer_offline|offline)$/i;

/** @param {string} msg */
function log(msg) {
  process.stdout.write(`[setup-code-server] ${msg}\n`);
}

function entryPath() {
  return path.join(CS_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

function wantedMarker() {
  return {
    codeServer: CODE_SERVER_VERSION,
    playwrightCore: PLAYWRIGHT_CORE_VERSION,
    nodeAbi: process.versions.modules,
    platform: process.platform,
    arch: process.arch,
  };
}

function isReady() {
  try {
    /** @type {Record<string, unknown>} written by install() (or anything else: every field is compared) */
    const marker = JSON.parse(fs.readFileSync(MARKER, 'utf8'));
    const want = wantedMarker();
    if (Object.entries(want).some(([k, v]) => marker[k] !== v)) return false;
    return EXPECTED_FILES.every((f) => fs.existsSync(path.join(CS_DIR, f)));
  } catch {
    return false;
  }
}

/**
 * @param {string} cmd
 * @returns {string | null} the path of the executable `cmd` on PATH
 */
function which(cmd) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function missingAptPackages() {
  if (!which('dpkg-query')) return null; // not Debian-like: cannot tell
  return APT_PACKAGES.filter((pkg) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${Status} is dpkg-query's format field, not a JS template
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return r.status !== 0 || !/install ok installed/.test(r.stdout);
  });
}

/** @param {{ noApt?: boolean }} options */
function ensureSystemPackages({ noApt }) {
  const missing = missingAptPackages();
  if (missing === null) {
    // Not Debian/Ubuntu: only check the two commands we really call.
    const need = ['rg', 'make', 'g++', 'python3'].filter((c) => !which(c));
    if (need.length) {
      throw new Error(
        `missing commands: ${need.join(', ')}. Install ripgrep, a C++ toolchain, python3, and the ` +
          'development headers for krb5, libx11, libxkbfile and libsecret with your package manager.',
      );
    }
    return;
  }
  if (missing.length === 0) return;
  const cmd = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (noApt || !isRoot() || !which('apt-get')) {
    throw new Error(`missing Debian packages: ${missing.join(' ')}\n  Install them first, for example:\n` + `    sudo apt-get update && sudo ${cmd}`);
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  if (r.status !== 0) {
    // The package lists may be missing or stale on a fresh machine.
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  }
  if (r.status !== 0) throw new Error(`apt-get failed: ${cmd}`);
}

// Node's headers for node-gyp, from the local Node installation (never downloaded).
function findNodeDir() {
  const candidates = [];
  if (process.env.npm_config_nodedir) candidates.push(process.env.npm_config_nodedir);
  candidates.push(path.resolve(path.dirname(process.execPath), '..'), '/usr', '/usr/local');
  for (const dir of candidates) {
    const versionH = path.join(dir, 'include', 'node', 'node_version.h');
    if (!fs.existsSync(versionH)) continue;
    const text = fs.readFileSync(versionH, 'utf8');
    const num = (/** @type {string} */ name) => (text.match(new RegExp(`#define ${name} (\\d+)`)) || [])[1];
    const v = `v${num('NODE_MAJOR_VERSION')}.${num('NODE_MINOR_VERSION')}.${num('NODE_PATCH_VERSION')}`;
    if (v === process.version) return dir;
    log(`headers in ${dir}/include/node are for ${v}, not ${process.version}; not using them`);
  }
  return null;
}

function ripgrepTarget() {
  const arch = process.env.npm_config_arch || os.arch();
  if (process.platform !== 'linux') return null;
  return { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl', ia32: 'i686-unknown-linux-musl' }[arch] || null;
}

// Puts a tarball of the system's rg where @vscode/ripgrep's postinstall looks before downloading.
/** @param {string} tmpDir */
function primeRipgrepCache(tmpDir) {
  const target = ripgrepTarget();
  if (!target) {
    log('not Linux x64/arm64: letting @vscode/ripgrep download ripgrep itself');
    return;
  }
  const rg = which('rg');
  if (!rg) throw new Error('ripgrep (rg) is not installed: apt-get install ripgrep');
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${VSCODE_RIPGREP_VERSION}`);
  const tarball = path.join(cacheDir, `ripgrep-${RIPGREP_RELEASE}-${target}.tar.gz`);
  if (fs.existsSync(tarball)) return;
  fs.mkdirSync(cacheDir, { recursive: true });
  const stage = fs.mkdtempSync(path.join(tmpDir, 'rg-'));
  fs.copyFileSync(fs.realpathSync(rg), path.join(stage, 'rg'));
  fs.chmodSync(path.join(stage, 'rg'), 0o755);
  const r = spawnSync('tar', ['-czf', tarball, '-C', stage, 'rg'], { stdio: 'inherit' });
  fs.rmSync(stage, { recursive: true, force: true });
  if (r.status !== 0) throw new Error('could not create the ripgrep cache tarball');
}

// npm 11 blocks dependency install scripts unless a policy allows them. The policy has to sit in files
// (package.json `allowScripts` or a project .npmrc): npm rejects `allow-scripts` given on the command line
// or in the environment for project-scoped installs, and npm exports any config it was given into the
// environment of lifecycle scripts, which would break code-server's nested `npm install` runs. So:
// the outer project gets `allowScripts` in its package.json, and lib/vscode and lib/vscode/extensions
// (installed by code-server's postinstall) get a project .npmrc each, written before that postinstall runs.
function writeNestedNpmrcs() {
  const vscodeDir = path.join(CS_DIR, 'node_modules', 'code-server', 'lib', 'vscode');
  for (const dir of [vscodeDir, path.join(vscodeDir, 'extensions')]) {
    if (!fs.existsSync(path.join(dir, 'package.json'))) throw new Error(`unexpected code-server layout: no ${dir}/package.json`);
    fs.writeFileSync(
      path.join(dir, '.npmrc'),
      [
        '# Written by scripts/setup-code-server.js (npm 11 install-script policy for this nested install).',
        `allow-scripts=${NESTED_ALLOWED_SCRIPTS.join(',')}`,
        // Fail instead of silently skipping when some other dependency wants an install script.
        'strict-allow-scripts=true',
        '',
      ].join('\n'),
    );
  }
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {import('child_process').SpawnOptions} opts
 * @param {{ verbose?: boolean }} options
 * @returns {Promise<number>} the exit code (128 + the signal number when killed by a signal)
 */
function runLogged(cmd, args, opts, { verbose }) {
  return new Promise((resolve) => {
    const out = fs.openSync(LOG_FILE, 'a');
    fs.writeSync(out, `\n$ ${cmd} ${args.join(' ')}\n`);
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    /** @param {Buffer} chunk */
    const onData = (chunk) => {
      fs.writeSync(out, chunk);
      if (verbose) process.stdout.write(chunk);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code, signal) => {
      fs.closeSync(out);
      resolve(code === null ? 128 + ((signal && os.constants.signals[signal]) || 1) : code);
    });
  });
}

function tailOfLog(lines = 60) {
  try {
    return fs.readFileSync(LOG_FILE, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** @param {{ verbose?: boolean, noApt?: boolean }} options */
async function install({ verbose, noApt }) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major !== 20) {
    throw new Error(
      `code-server ${CODE_SERVER_VERSION} needs Node 20 (this is ${process.version}). Use Node 20, or a desktop VS Code (\`code\` on PATH) for \`npm start\`.`,
    );
  }
  ensureSystemPackages({ noApt });

  fs.rmSync(CS_DIR, { recursive: true, force: true });
  fs.mkdirSync(CS_DIR, { recursive: true });
  fs.mkdirSync(INSTALL_TMP, { recursive: true });
  fs.writeFileSync(LOG_FILE, `setup-code-server ${new Date().toISOString()}\n`);
  fs.writeFileSync(
    path.join(CS_DIR, 'package.json'),
    `${JSON.stringify(
      {
        name: 'ghostline-e2e-code-server',
        private: true,
        description: 'Written by scripts/setup-code-server.js; safe to delete.',
        dependencies: { 'code-server': CODE_SERVER_VERSION, 'playwright-core': PLAYWRIGHT_CORE_VERSION },
        allowScripts: OUTER_ALLOWED_SCRIPTS,
      },
      null,
      2,
    )}\n`,
  );

  primeRipgrepCache(INSTALL_TMP);
  const nodeDir = findNodeDir();
  if (!nodeDir) log('warning: no Node headers found next to node; node-gyp may try to download them');

  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    // An outer `npm run`/`npm test` exports its whole config (and its project's) as npm_config_*: keep only
    // how to reach the registry; in particular an exported allow-scripts would make npm refuse the install.
    if (/^npm_(package|lifecycle)_/i.test(k)) delete env[k];
    if (/^npm_config_/i.test(k) && !KEEP_NPM_ENV.test(k)) delete env[k];
  }
  Object.assign(env, {
    npm_config_unsafe_perm: 'true', // code-server's postinstall refuses to run as root without it
    npm_config_yes: 'true', // node-pty's postinstall runs `npx node-gyp`
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
    npm_config_progress: 'false',
    // Pinned allowScripts entries are matched against the resolved URL in the lockfile; without it
    // (omit-lockfile-registry-resolved, set in some user npmrcs) npm refuses them.
    npm_config_omit_lockfile_registry_resolved: 'false',
    TMPDIR: INSTALL_TMP, // the ripgrep cache lives under os.tmpdir()
  });
  if (nodeDir) env.npm_config_nodedir = nodeDir;
  delete env.FORCE_NODE_VERSION;

  log(
    `installing code-server@${CODE_SERVER_VERSION} and playwright-core@${PLAYWRIGHT_CORE_VERSION} into ` +
      `${path.relative(ROOT, CS_DIR)}/ (about 2 minutes; log: ${path.relative(ROOT, LOG_FILE)})`,
  );
  // 1. Fetch everything without running any install script; 2. put the install-script policy in place for
  // the nested installs; 3. run the install scripts (code-server's postinstall installs lib/vscode).
  let code = await runLogged('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: CS_DIR, env }, { verbose });
  if (code === 0) {
    writeNestedNpmrcs();
    code = await runLogged('npm', ['rebuild', '--foreground-scripts', '--strict-allow-scripts'], { cwd: CS_DIR, env }, { verbose });
  }
  if (code !== 0) {
    throw new Error(`npm failed (exit ${code}). Last lines of ${LOG_FILE}:\n${tailOfLog()}`);
  }
  const missing = EXPECTED_FILES.filter((f) => !fs.existsSync(path.join(CS_DIR, f)));
  if (missing.length) {
    throw new Error(`install scripts did not run completely; missing:\n  ${missing.join('\n  ')}\n` + `Last lines of ${LOG_FILE}:\n${tailOfLog()}`);
  }
  const v = spawnSync(process.execPath, [entryPath(), '--version'], { encoding: 'utf8', timeout: 60_000 });
  if (v.status !== 0 || !v.stdout.includes(CODE_SERVER_VERSION)) {
    throw new Error(`code-server does not start: ${v.stdout}${v.stderr}`);
  }
  fs.writeFileSync(MARKER, `${JSON.stringify({ ...wantedMarker(), installedAt: new Date().toISOString() }, null, 2)}\n`);
  fs.rmSync(INSTALL_TMP, { recursive: true, force: true });
}

// Returns the path of code-server's entry.js, installing it first if needed.
/** @param {{ force?: boolean, verbose?: boolean, noApt?: boolean }} [opts] */
async function ensureCodeServer(opts = {}) {
  if (!opts.force && isReady()) return entryPath();
  const t0 = Date.now();
  await install(opts);
  log(`code-server ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return entryPath();
}

// playwright-core: the project's devDependency if installed, else the copy in .e2e/code-server.
/** @returns {typeof import('playwright-core')} */
function requirePlaywright() {
  for (const base of [ROOT, CS_DIR]) {
    try {
      return require(require.resolve('playwright-core', { paths: [base] }));
    } catch {
      /* next */
    }
  }
  throw new Error('playwright-core is not installed: run `npm ci` or `node scripts/setup-code-server.js`');
}

module.exports = { ensureCodeServer, requirePlaywright, isReady, entryPath, which, CS_DIR, E2E_DIR, CODE_SERVER_VERSION };

if (require.main === module) {
  const args = process.argv.slice(2);
  const opts = { force: args.includes('--force'), verbose: args.includes('--verbose'), noApt: args.includes('--no-apt') };
  const t0 = Date.now();
  ensureCodeServer(opts).then(
    (entry) => {
      log(`ok: ${path.relative(ROOT, entry)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    },
    (err) => {
      console.error(`[setup-code-server] FAILED: ${err.message}`);
      process.exit(1);
    },
  );
}
