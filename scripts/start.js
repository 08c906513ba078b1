#!/usr/bin/env node
// `npm start`: builds the extension and opens a VS Code with it loaded (extension development mode) on a
// sample workspace.
//   - With a desktop VS Code (`code` on PATH): code --extensionDevelopmentPath=<repo> <workspace>
//   - Otherwise: code-server (installed into .e2e/ on first use) on 127.0.0.1; open the printed URL in a
//     browser. Runs until Ctrl-C.
// Options:
//   --code-server        use code-server even when `code` is on PATH
//   --port <n>           code-server port (default: a free one; or $GHOSTLINE_PORT)
//   --host <addr>        bind address (default 127.0.0.1; there is no password, so keep it local and use an
//                        SSH tunnel from another machine: ssh -L <port>:127.0.0.1:<port> <this machine>)
//   --workspace <dir>    open this folder instead of the sample workspace
//   --reset              start again from a fresh copy of media/sample-workspace
//   --watch              rebuild on change (reload the window to pick it up: "Developer: Reload Window")

const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { which } = require('./setup-code-server');

const ROOT = path.resolve(__dirname, '..');
const SAMPLE = path.join(ROOT, 'media', 'sample-workspace');
const SAMPLE_COPY = path.join(ROOT, '.e2e', 'sample-workspace');
const EXTENSION_ID = 'ghostline.ghostline';

/**
 * @typedef {object} Options
 * @property {boolean} codeServer
 * @property {number | undefined} port
 * @property {string} host
 * @property {string | undefined} workspace
 * @property {boolean} reset
 * @property {boolean} watch
 */

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {Options} */
  const o = { codeServer: false, port: Number(process.env.GHOSTLINE_PORT) || undefined, host: '127.0.0.1', workspace: undefined, reset: false, watch: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--code-server') o.codeServer = true;
    else if (a === '--port') o.port = Number(argv[++i]);
    else if (a === '--host') o.host = argv[++i];
    else if (a === '--workspace') o.workspace = path.resolve(argv[++i]);
    else if (a === '--reset') o.reset = true;
    else if (a === '--watch') o.watch = true;
    else if (a === '-h' || a === '--help') {
      console.log(
        fs
          .readFileSync(__filename, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('//'))
          .map((l) => l.slice(3))
          .join('\n'),
      );
      process.exit(0);
    } else throw new Error(`unknown argument: ${a}`);
  }
  return o;
}

/** @param {string} msg */
function log(msg) {
  process.stdout.write(`[start] ${msg}\n`);
}

// A desktop VS Code, not the `code` helper that code-server and remote windows put on PATH.
function desktopCode() {
  const code = which('code');
  if (!code) return null;
  const real = fs.realpathSync(code);
  if (/code-server|remote-cli|vscode-server/.test(real) || process.env.VSCODE_IPC_HOOK_CLI) return null;
  return code;
}

/** @param {boolean} reset */
function sampleWorkspace(reset) {
  if (reset) fs.rmSync(SAMPLE_COPY, { recursive: true, force: true });
  if (!fs.existsSync(SAMPLE_COPY)) fs.cpSync(SAMPLE, SAMPLE_COPY, { recursive: true });
  return SAMPLE_COPY;
}

/** @param {boolean} watch */
function build(watch) {
  const r = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed (node esbuild.js)');
  if (!watch) return null;
  const child = spawn(process.execPath, ['esbuild.js', '--watch'], { cwd: ROOT, stdio: 'inherit' });
  log('esbuild is watching src/; after a change run "Developer: Reload Window" in VS Code');
  return child;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const watcher = build(o.watch);
  const workspace = o.workspace || sampleWorkspace(o.reset);

  const code = !o.codeServer && desktopCode();
  if (code) {
    log(`desktop VS Code: ${code} --extensionDevelopmentPath=${ROOT} ${workspace}`);
    const r = spawnSync(code, ['--new-window', `--extensionDevelopmentPath=${ROOT}`, workspace], { stdio: 'inherit' });
    if (!watcher) return r.status || 0;
    log('Ctrl-C stops the watcher');
    await new Promise(() => {});
  }

  const cs = require('./code-server');
  const server = await cs.startCodeServer({ label: 'start', host: o.host, port: o.port, quiet: true });
  const url = server.workbenchUrl({ folder: workspace, extensionDevelopmentPath: ROOT });
  let stopping = false;
  /** @param {string} signal */
  const shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping code-server`);
    if (watcher) watcher.kill('SIGTERM');
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  if (o.host !== '127.0.0.1' && o.host !== 'localhost') log(`WARNING: listening on ${o.host} without a password`);

  console.log('');
  console.log(`  Ghostline in VS Code (code-server ${require('./setup-code-server').CODE_SERVER_VERSION}), open in a browser:`);
  console.log('');
  console.log(`    ${url}`);
  console.log('');
  console.log(`  Workspace: ${workspace}`);
  console.log(`  Logs:      ${server.runDir} (code-server.log; user-data/logs/*/exthost*/ for the extension host)`);
  console.log(`  From another machine: ssh -L ${server.port}:127.0.0.1:${server.port} <this host>, then the same URL.`);
  console.log('  Ctrl-C to stop.');
  console.log('');

  server.waitForActivation(EXTENSION_ID, { timeoutMs: 24 * 3600 * 1000, intervalMs: 1000 }).then(
    () => log(`${EXTENSION_ID} activated in the extension host`),
    () => {},
  );
  const exit = await new Promise((resolve) => server.process.on('exit', (c, s) => resolve(s || c)));
  if (stopping) return new Promise(() => {}); // shutdown() exits
  log(`code-server exited (${exit}); see ${server.logFile}`);
  if (watcher) watcher.kill('SIGTERM');
  await server.stop();
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[start] ERROR: ${err?.message ? err.message : err}`);
    process.exit(1);
  },
);
