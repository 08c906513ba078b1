#!/usr/bin/env node
// Runs the integration suite (out/test/integration/index.js, compiled from test/integration/) inside a real
// VS Code extension host, with this repository loaded as the extension under development and a fresh copy of
// test/integration/workspace/ opened as the workspace folder.
//
//   node scripts/run-integration.js             code-server + headless Chromium (works offline; default)
//   node scripts/run-integration.js --electron  @vscode/test-electron (desktop VS Code; downloads VS Code,
//                                                so it needs internet, and a display or xvfb-run on Linux)
// Options: --build (esbuild + tsc first), --grep <regexp>, --timeout <seconds> (whole run, default 600),
//          --vscode-version <v> (with --electron; default: stable),
//          --vsix <file> (run the suite against that package, unpacked as VS Code installs it, instead of this
//          folder: `--vsix ghostline-<platform>.vsix --grep platform` is the platform smoke of the CI matrix).
// Exit code: 0 when every test passed. The JSON summary is written to <run folder>/results.json and copied
// to test-results/integration.json.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const SUITE = path.join(ROOT, 'out', 'test', 'integration', 'index.js');
const WORKSPACE_TEMPLATE = path.join(ROOT, 'test', 'integration', 'workspace');
const RESULTS_COPY = path.join(ROOT, 'test-results', 'integration.json');
const EXTENSION_ID = 'ghostline.ghostline';

/**
 * @typedef {object} Options
 * @property {boolean} electron
 * @property {boolean} build
 * @property {string | undefined} grep
 * @property {number} timeoutS
 * @property {string | undefined} vscodeVersion
 * @property {string | undefined} vsix
 */
/**
 * The JSON summary the suite writes (results.json; its type lives in test/integration/harness.ts).
 * @typedef {import('../test/integration/harness').RunSummary} RunSummary
 */

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {Options} */
  const opts = { electron: false, build: false, grep: undefined, timeoutS: 600, vscodeVersion: undefined, vsix: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--electron') opts.electron = true;
    else if (a === '--build') opts.build = true;
    else if (a === '--grep') opts.grep = argv[++i];
    else if (a === '--timeout') opts.timeoutS = Number(argv[++i]);
    else if (a === '--vscode-version') opts.vscodeVersion = argv[++i];
    else if (a === '--vsix') opts.vsix = path.resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument: ${a}`);
  }
  return opts;
}

/** @param {string} msg */
function log(msg) {
  process.stdout.write(`[integration] ${msg}\n`);
}

function build() {
  /** @type {Array<[string, string[]]>} */
  const commands = [
    [process.execPath, ['esbuild.js']],
    [process.execPath, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-p', '.']],
  ];
  for (const [cmd, args] of commands) {
    const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`build failed: ${path.basename(args[0])}`);
  }
}

/** @param {string} dest */
function copyWorkspace(dest) {
  fs.rmSync(dest, { recursive: true, force: true });
  fs.cpSync(WORKSPACE_TEMPLATE, dest, { recursive: true });
  return dest;
}

/**
 * @param {string} file
 * @returns {RunSummary | null} the parsed file, trusted to have the suite's shape; null when it cannot be read
 */
function readResults(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * @param {string} resultsFile
 * @param {{ brief?: boolean }} [options]
 */
function report(resultsFile, { brief = false } = {}) {
  const summary = readResults(resultsFile);
  if (!summary) {
    log(`no results file at ${resultsFile}`);
    return null;
  }
  fs.mkdirSync(path.dirname(RESULTS_COPY), { recursive: true });
  fs.copyFileSync(resultsFile, RESULTS_COPY);
  for (const r of brief ? summary.results.filter((x) => x.status === 'failed') : summary.results) {
    const mark = r.status === 'passed' ? 'ok  ' : r.status === 'skipped' ? 'skip' : 'FAIL';
    log(`${mark} ${r.file} > ${r.name}${r.durationMs ? ` (${r.durationMs} ms)` : ''}${r.status === 'skipped' && r.error ? ` (${r.error})` : ''}`);
    if (r.status === 'failed' && r.error && !brief) process.stdout.write(`${r.error.replace(/^/gm, '        ')}\n`);
  }
  log(`${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped`);
  return summary;
}

/**
 * The extension folder the suite runs against: this repository, or the package unpacked as VS Code installs it.
 * @param {Options} opts
 * @param {string} runDir
 */
async function extensionUnderTest(opts, runDir) {
  if (!opts.vsix) return ROOT;
  const { unpackVsix } = require('./vsix-check');
  const ext = await unpackVsix(opts.vsix, path.join(runDir, 'installed'));
  log(`running against ${path.basename(opts.vsix)}, unpacked into ${path.relative(ROOT, ext)}`);
  return ext;
}

/** @param {Options} opts */
async function runInCodeServer(opts) {
  const cs = require('./code-server');
  const t0 = Date.now();
  const runDir = cs.newRunDir('integration');
  const resultsFile = path.join(runDir, 'results.json');
  // The extension host inherits the server's environment.
  /** @type {Record<string, string>} */
  const env = { GHOSTLINE_TEST_RESULTS: resultsFile };
  if (opts.grep) env.GHOSTLINE_TEST_GREP = opts.grep;
  if (process.env.GHOSTLINE_TEST_MODEL) env.GHOSTLINE_TEST_MODEL = path.resolve(process.env.GHOSTLINE_TEST_MODEL);
  if (opts.vsix) env.GHOSTLINE_TEST_PACKAGED = '1';
  const extensionDevelopmentPath = await extensionUnderTest(opts, runDir);
  const server = await cs.startCodeServer({ runDir, quiet: true, env });
  let closeBrowser;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    const workspace = copyWorkspace(path.join(server.runDir, 'workspace'));
    const url = server.workbenchUrl({ folder: workspace, extensionDevelopmentPath, extensionTestsPath: SUITE });
    log(`code-server ${server.url} up in ${server.startupMs} ms; run folder ${path.relative(ROOT, server.runDir)}`);
    /** @type {(code: number) => void} */
    let resolveExit = () => {}; // replaced at once by the Promise executor below
    /** @type {Promise<number>} */
    const exited = new Promise((r) => {
      resolveExit = r;
    });
    const browser = await cs.openBrowser({ runDir: server.runDir, tmpDir: server.tmpDir, onExit: (code) => resolveExit(code) });
    closeBrowser = browser.close;
    let sawLive = false;
    const consoleLog = fs.createWriteStream(path.join(server.runDir, 'browser-console.log'));
    browser.page.on('console', (m) => {
      const text = m.text();
      consoleLog.write(`${m.type()}: ${text}\n`);
      if (!text.includes('[ghostline-itest]')) return;
      sawLive = true;
      process.stdout.write(`${text.replace(/^.*?\[ghostline-itest\]/gm, '  |')}\n`);
    });
    browser.page.on('pageerror', (err) => consoleLog.write(`pageerror: ${err.stack || err}\n`));
    await browser.page.goto(url);
    const timeout = new Promise((r) => {
      timer = setTimeout(() => r('timeout'), opts.timeoutS * 1000);
    });
    const code = await Promise.race([exited, timeout]);
    if (code === 'timeout') {
      log(`timed out after ${opts.timeoutS} s; logs in ${server.runDir}`);
      report(resultsFile);
      return 1;
    }
    log(`extension host finished with code ${code} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The live output (forwarded from the extension host's console) already showed the details.
    const summary = report(resultsFile, { brief: sawLive });
    if (code === 0 && (!summary || summary.failed > 0)) return 1;
    return code === 0 ? 0 : 1;
  } finally {
    clearTimeout(timer);
    if (closeBrowser) await closeBrowser();
    await server.stop();
  }
}

/** @param {Options} opts */
async function runInElectron(opts) {
  /** @type {typeof import('@vscode/test-electron').runTests} */
  let runTests;
  try {
    ({ runTests } = require(require.resolve('@vscode/test-electron', { paths: [ROOT] })));
  } catch {
    throw new Error('@vscode/test-electron is not installed (npm ci)');
  }
  const cs = require('./code-server');
  const runDir = cs.newRunDir('electron');
  const userDataDir = path.join(runDir, 'user-data');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(cs.DEFAULT_SETTINGS, null, 2));
  const workspace = copyWorkspace(path.join(runDir, 'workspace'));
  const resultsFile = path.join(runDir, 'results.json');
  /** @type {Record<string, string>} */
  const extensionTestsEnv = { GHOSTLINE_TEST_RESULTS: resultsFile };
  if (opts.grep) extensionTestsEnv.GHOSTLINE_TEST_GREP = opts.grep;
  if (process.env.GHOSTLINE_TEST_MODEL) extensionTestsEnv.GHOSTLINE_TEST_MODEL = path.resolve(process.env.GHOSTLINE_TEST_MODEL);
  if (opts.vsix) extensionTestsEnv.GHOSTLINE_TEST_PACKAGED = '1';
  const extensionDevelopmentPath = await extensionUnderTest(opts, runDir);
  let code;
  try {
    code = await runTests({
      version: opts.vscodeVersion || process.env.VSCODE_TEST_VERSION || 'stable',
      extensionDevelopmentPath,
      extensionTestsPath: SUITE,
      extensionTestsEnv,
      launchArgs: [workspace, '--user-data-dir', userDataDir, '--extensions-dir', path.join(runDir, 'extensions'), '--disable-telemetry'],
    });
  } catch (err) {
    log(`test-electron failed: ${err instanceof Error && err.message ? err.message : err}`);
    code = 1;
  }
  const summary = report(resultsFile);
  if (code === 0 && (!summary || summary.failed > 0)) return 1;
  return code === 0 ? 0 : 1;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.build) build();
  if (!fs.existsSync(SUITE)) throw new Error(`${path.relative(ROOT, SUITE)} is missing: run \`npx tsc -p .\` (or pass --build)`);
  if (!opts.vsix && !fs.existsSync(path.join(ROOT, 'dist', 'extension.js')))
    throw new Error('dist/extension.js is missing: run `node esbuild.js` (or pass --build)');
  // The server tests start a real llama-server (scripts/llama-server.js, built from source once, with the default
  // model as GGUF): prepared here, not inside the editor's extension host, whose thread a build of minutes would
  // freeze past this run's timeout on a fresh machine. Later runs find both in the cache at once.
  if (!opts.vsix) {
    const llama = require('./llama-server');
    llama.ensureBinary();
    llama.ensureGguf();
  }
  const t0 = Date.now();
  log(`suite ${path.relative(ROOT, SUITE)} for ${EXTENSION_ID} via ${opts.electron ? '@vscode/test-electron' : 'code-server'}`);
  const code = opts.electron ? await runInElectron(opts) : await runInCodeServer(opts);
  log(`${code === 0 ? 'PASSED' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return code;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`[integration] ERROR: ${err?.stack ? err.stack : err}`);
      process.exit(1);
    },
  );
}

module.exports = { main };
