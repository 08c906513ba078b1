// Runs code-server (a real VS Code: workbench in the browser, Node.js extension host on this machine) in an
// isolated run folder, and drives it with Playwright and the system's Chromium.
//
//   const cs = require('./code-server');
//   const server = await cs.startCodeServer({ label: 'e2e', settings: { ... } });
//   const url = server.workbenchUrl({ folder, extensionDevelopmentPath, extensionTestsPath });
//   const { page, close } = await cs.openBrowser({ runDir: server.runDir, tmpDir: server.tmpDir, url });
//   ... await server.waitForActivation('ghostline.ghostline') ...
//   await close(); await server.stop();
//
// Everything the server writes (user data, extensions, logs, XDG folders, temp files) stays in the run folder
// (.e2e/runs/<label>-<time>/ by default); a short socket/temp folder is used when that path is too long
// for Unix sockets.

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const http = require('node:http');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const setup = require('./setup-code-server');

const ROOT = path.resolve(__dirname, '..');
const RUNS_DIR = path.join(setup.E2E_DIR, 'runs');
const KEEP_RUNS = 8;

/**
 * Options of startCodeServer().
 * @typedef {object} StartOptions
 * @property {string} [label] name prefix of the run folder (default 'run')
 * @property {string} [runDir] explicit run folder (default .e2e/runs/<label>-<time>)
 * @property {Record<string, unknown>} [settings] user settings merged over DEFAULT_SETTINGS
 * @property {Record<string, string>} [env] extra environment variables for the server and so its extension host
 * @property {number} [port] fixed port (default: a free one)
 * @property {string} [host] bind address (default 127.0.0.1)
 * @property {boolean} [quiet] do not echo the server's output (it always goes to <runDir>/code-server.log)
 * @property {boolean} [install] install code-server first when missing (default true)
 * @property {number} [startTimeoutMs] how long to wait for the server to answer (default 60 s)
 * @property {string[]} [args] extra code-server command-line arguments
 * @property {string[]} [vsix] .vsix files installed into the run's own (empty) extensions folder before start
 */

/**
 * Options of the server's workbenchUrl(); folder and paths are paths on this machine.
 * @typedef {object} WorkbenchUrlOptions
 * @property {string} [folder]
 * @property {string} [extensionDevelopmentPath]
 * @property {string} [extensionTestsPath]
 * @property {Array<[string, string]>} [payload] further workbench payload entries (name, value)
 */

/**
 * Options of the server's waitForLog() and waitForActivation().
 * @typedef {object} WaitForLogOptions
 * @property {number} [timeoutMs]
 * @property {(file: string) => boolean} [filter] which log files to search (by path)
 * @property {number} [intervalMs]
 */

/**
 * Options of openBrowser().
 * @typedef {object} BrowserOptions
 * @property {string} [runDir]
 * @property {string} [tmpDir]
 * @property {boolean} [headless]
 * @property {(code: number) => void} [onExit]
 * @property {{ width: number, height: number }} [viewport]
 * @property {string} [url]
 */

const DEFAULT_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'update.showReleaseNotes': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'git.enabled': false,
  'git.autoRepositoryDetection': false,
  'editor.inlineSuggest.enabled': true,
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.suggestOnTriggerCharacters': false,
  'editor.wordBasedSuggestions': 'off',
  'editor.parameterHints.enabled': false,
  'files.autoSave': 'off',
  'files.hotExit': 'off',
  'window.restoreWindows': 'none',
};

// Flags from the notes on running Debian's Chromium headless on these machines.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** @param {string} msg */
function _log(msg) {
  process.stdout.write(`[code-server] ${msg}\n`);
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      // A TCP server (not a pipe) that is listening: address() is an AddressInfo.
      const { port } = /** @type {import('net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

function stamp() {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
}

/** @param {string} label */
function pruneOldRuns(label) {
  let entries;
  try {
    entries = fs
      .readdirSync(RUNS_DIR)
      .filter((d) => d.startsWith(`${label}-`))
      .sort();
  } catch {
    return;
  }
  for (const d of entries.slice(0, Math.max(0, entries.length - KEEP_RUNS))) {
    fs.rmSync(path.join(RUNS_DIR, d), { recursive: true, force: true });
  }
}

/** A new run folder path .e2e/runs/<label>-<time>-<pid> (older runs of the label beyond the last few are removed). */
function newRunDir(label = 'run') {
  pruneOldRuns(label);
  return path.join(RUNS_DIR, `${label}-${stamp()}-${process.pid}`);
}

/**
 * @param {string} url
 * @returns {Promise<number | undefined>} the HTTP status, or 0 when there was no answer
 */
function httpGetStatus(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * @param {string} dir
 * @param {string[]} [out]
 * @returns {string[]}
 */
function listFiles(dir, out = []) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) listFiles(p, out);
    else out.push(p);
  }
  return out;
}

/**
 * Starts code-server. Options:
 *   label        name prefix of the run folder (default 'run')
 *   runDir       explicit run folder (default .e2e/runs/<label>-<time>)
 *   settings     user settings merged over DEFAULT_SETTINGS
 *   env          extra environment variables for the server and so its extension host
 *   port         fixed port (default: a free one)
 *   host         bind address (default 127.0.0.1)
 *   quiet        do not echo the server's output (it always goes to <runDir>/code-server.log)
 *   install      install code-server first when missing (default true)
 *   vsix         .vsix files to install into the run's clean extensions folder first (what users install)
 * @param {StartOptions} [opts]
 */
async function startCodeServer(opts = {}) {
  const label = opts.label || 'run';
  const entry = opts.install === false ? setup.entryPath() : await setup.ensureCodeServer();
  if (!fs.existsSync(entry)) throw new Error('code-server is not installed: node scripts/setup-code-server.js');

  const runDir = opts.runDir || newRunDir(label);
  const userDataDir = path.join(runDir, 'user-data');
  const extensionsDir = path.join(runDir, 'extensions');
  const xdg = path.join(runDir, 'xdg');
  // Unix socket paths are limited to 107 bytes; VS Code puts sockets (vscode-ipc-<uuid>.sock, 52 bytes)
  // in the temp folder.
  let tmpDir = path.join(runDir, 'tmp');
  let ownTmp = false;
  if (Buffer.byteLength(tmpDir) > 50) {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'glcs-'));
    ownTmp = true;
  }
  for (const d of [
    userDataDir,
    path.join(userDataDir, 'User'),
    extensionsDir,
    tmpDir,
    path.join(xdg, 'config'),
    path.join(xdg, 'data'),
    path.join(xdg, 'cache'),
    path.join(xdg, 'state'),
  ]) {
    fs.mkdirSync(d, { recursive: true });
  }
  const settings = { ...DEFAULT_SETTINGS, ...(opts.settings || {}) };
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  const configFile = path.join(runDir, 'config.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');

  const host = opts.host || '127.0.0.1';
  const port = opts.port || (await freePort());
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    // Variables of an enclosing VS Code window or npm run must not reach this server.
    if (/^(VSCODE_|ELECTRON_|npm_)/i.test(k) || k === 'CODE_SERVER_PARENT_PID') delete env[k];
  }
  Object.assign(env, {
    XDG_CONFIG_HOME: path.join(xdg, 'config'),
    XDG_DATA_HOME: path.join(xdg, 'data'),
    XDG_CACHE_HOME: path.join(xdg, 'cache'),
    XDG_STATE_HOME: path.join(xdg, 'state'),
    XDG_RUNTIME_DIR: tmpDir,
    TMPDIR: tmpDir,
    ...(opts.env || {}),
  });
  delete env.PASSWORD;
  delete env.HASHED_PASSWORD;
  delete env.PORT;

  const dirArgs = ['--config', configFile, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];
  for (const vsix of opts.vsix || []) {
    // code-server's own installer, as a user's `--install-extension` would run it; it fails loudly on a bad package.
    const r = spawnSync(process.execPath, [entry, ...dirArgs, '--install-extension', path.resolve(vsix)], { cwd: runDir, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`installing ${vsix} failed (${r.status}): ${(r.stderr || r.stdout).trim()}`);
    _log(`installed ${path.basename(vsix)}: ${r.stdout.trim().split('\n').pop()}`);
  }

  const args = [
    entry,
    '--config',
    configFile,
    '--bind-addr',
    `${host}:${port}`,
    '--auth',
    'none',
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    ...(opts.args || []),
  ];
  const logFile = path.join(runDir, 'code-server.log');
  const logFd = fs.openSync(logFile, 'a');
  const t0 = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: runDir,
    env,
    detached: true, // own process group: stop() kills the server and everything it started
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  /** @type {{ code: number | null, signal: NodeJS.Signals | null } | null} */
  let exited = null;
  const exitPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
  });
  /** @param {Buffer} chunk */
  const onData = (chunk) => {
    try {
      fs.writeSync(logFd, chunk);
    } catch {
      /* closed */
    }
    if (!opts.quiet) process.stdout.write(chunk.toString().replace(/^(?=.)/gm, '  [cs] '));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);

  /** @param {NodeJS.Signals} signal */
  const killGroup = (signal) => {
    try {
      if (child.pid === undefined) return; // never spawned: no group to kill
      process.kill(-child.pid, signal);
    } catch {
      /* gone */
    }
  };
  // If this process dies without calling stop(), take the server down with it.
  const onExit = () => killGroup('SIGKILL');
  process.on('exit', onExit);

  let stopped = false;
  async function stop() {
    if (stopped) return;
    stopped = true;
    process.off('exit', onExit);
    if (!exited) {
      killGroup('SIGTERM');
      const t = setTimeout(() => killGroup('SIGKILL'), 5000);
      await exitPromise;
      clearTimeout(t);
    }
    // Stragglers of the group (extension host, watchers) that ignored SIGTERM.
    killGroup('SIGKILL');
    try {
      fs.closeSync(logFd);
    } catch {
      /* already */
    }
    if (ownTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
  }

  const base = `http://${host}:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs || 60_000);
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`code-server exited (${JSON.stringify(exited)}) before listening; see ${logFile}`);
    }
    if ((await httpGetStatus(`${base}/healthz`)) === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server did not answer on ${base} in time; see ${logFile}`);
    }
    await sleep(200);
  }
  const startupMs = Date.now() - t0;

  /** @param {string} p */
  function remoteUri(p) {
    return `vscode-remote://${host}:${port}${path.resolve(p).split(path.sep).join('/')}`;
  }

  /**
   * The workbench URL; folder and paths are paths on this machine.
   * @param {WorkbenchUrlOptions} [options]
   */
  function workbenchUrl({ folder, extensionDevelopmentPath, extensionTestsPath, payload = [] } = {}) {
    const params = [];
    if (folder) params.push(`folder=${encodeURIComponent(path.resolve(folder))}`);
    const p = [];
    if (extensionDevelopmentPath) p.push(['extensionDevelopmentPath', remoteUri(extensionDevelopmentPath)]);
    if (extensionTestsPath) p.push(['extensionTestsPath', remoteUri(extensionTestsPath)]);
    p.push(...payload);
    if (p.length) params.push(`payload=${encodeURIComponent(JSON.stringify(p))}`);
    return `${base}/${params.length ? `?${params.join('&')}` : ''}`;
  }

  /** @param {(file: string) => boolean} [filter] */
  function logsText(filter) {
    return listFiles(path.join(userDataDir, 'logs'))
      .filter((f) => !filter || filter(f))
      .map((f) => {
        try {
          return fs.readFileSync(f, 'utf8');
        } catch {
          return '';
        }
      })
      .join('\n');
  }

  /**
   * Polls the server's log files (user-data/logs) until `pattern` appears.
   * @param {string | RegExp} pattern
   * @param {WaitForLogOptions} [options]
   */
  async function waitForLog(pattern, { timeoutMs = 90_000, filter, intervalMs = 250 } = {}) {
    const re = typeof pattern === 'string' ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : pattern;
    const end = Date.now() + timeoutMs;
    for (;;) {
      const m = re.exec(logsText(filter));
      if (m) return m;
      if (exited) throw new Error(`code-server exited while waiting for ${re}`);
      if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${re} in ${userDataDir}/logs`);
      await sleep(intervalMs);
    }
  }

  /**
   * Waits until the extension host has activated the extension (see notes: exthost log line).
   * @param {string} extensionId
   * @param {WaitForLogOptions} [opts2]
   */
  function waitForActivation(extensionId, opts2 = {}) {
    return waitForLog(`ExtensionService#_doActivateExtension ${extensionId}`, {
      filter: (f) => /exthost/i.test(f),
      ...opts2,
    });
  }

  return {
    url: base,
    host,
    port,
    runDir,
    userDataDir,
    extensionsDir,
    tmpDir,
    logFile,
    env,
    process: child,
    startupMs,
    workbenchUrl,
    remoteUri,
    waitForLog,
    waitForActivation,
    logsText,
    stop,
    get exited() {
      return exited;
    },
  };
}

function chromiumPath() {
  // filter(Boolean) drops an unset (or empty) CHROMIUM_PATH; TypeScript does not narrow through Boolean.
  const candidates = /** @type {string[]} */ (
    [
      process.env.CHROMIUM_PATH,
      '/usr/bin/chromium',
      '/usr/bin/chromium-browser',
      '/usr/bin/google-chrome',
      '/usr/bin/google-chrome-stable',
      '/snap/bin/chromium',
    ].filter(Boolean)
  );
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error('no Chromium found (apt-get install chromium, or set CHROMIUM_PATH); ' + 'Playwright must not download a browser here');
  }
  return found;
}

/**
 * Launches Chromium (headless unless headless: false) with a fresh profile in <runDir>/chromium (temp files in
 * tmpDir, e.g. the server's short one) and returns { context, page, close }; close() closes the browser and
 * removes the profile. With onExit, `window.codeAutomationExit(code)` (called by the workbench when an
 * extensionTestsPath suite finishes) reaches onExit(code).
 * @param {BrowserOptions} [options]
 */
async function openBrowser({ runDir, tmpDir, headless = true, onExit, viewport = { width: 1400, height: 900 }, url } = {}) {
  const { chromium } = setup.requirePlaywright();
  /** @type {string | null} */
  let ownDir = null;
  let baseDir = runDir;
  if (!baseDir) baseDir = ownDir = fs.mkdtempSync(path.join(os.tmpdir(), 'glcr-'));
  const profile = path.join(baseDir, 'chromium');
  fs.mkdirSync(profile, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless,
    args: CHROMIUM_ARGS,
    viewport,
    env: tmpDir ? { ...process.env, TMPDIR: tmpDir } : process.env,
  });
  const page = context.pages()[0] || (await context.newPage());
  if (onExit) await page.exposeFunction('codeAutomationExit', (/** @type {number} */ code) => onExit(code));
  if (url) await page.goto(url);
  // Closes the browser and removes its profile (only useful while it runs; about 6 MB a run).
  const close = async () => {
    await context.close().catch(() => {});
    try {
      fs.rmSync(ownDir || profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch {
      /* leave it */
    }
  };
  return { context, page, close };
}

module.exports = { startCodeServer, openBrowser, newRunDir, chromiumPath, freePort, DEFAULT_SETTINGS, CHROMIUM_ARGS, ROOT, RUNS_DIR };
