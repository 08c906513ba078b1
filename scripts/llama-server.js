#!/usr/bin/env node
// A real llama.cpp server for the server-backend tests and benchmarks, offline:
//   - its source is the git bundle inside the node-llama-cpp npm package (installed, pinned, in .bench-deps/);
//   - `llama-server` alone is built with Debian's cmake and g++ once, into a cache folder outside the clone
//     (GHOSTLINE_CACHE, default ~/.cache/ghostline), keyed by the package version: later runs only start it;
//   - the default model is exported as GGUF by tools/model/export_gguf.py into the same cache.
// `node scripts/llama-server.js` builds (if needed) and prints the binary's path; tests require() it.
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const NODE_LLAMA_CPP = '3.22.1';
const CACHE = process.env.GHOSTLINE_CACHE || path.join(os.homedir(), '.cache', 'ghostline');
const BUILD = path.join(CACHE, `llama-server-${NODE_LLAMA_CPP}`);
const BINARY = path.join(BUILD, 'build', 'bin', 'llama-server');
/** The llama.cpp source tree the binaries are built from (its gguf-py is llama.cpp's own GGUF reader). */
const LLAMA_SOURCE = path.join(BUILD, 'src');

/** @param {string} cmd @param {string[]} args @param {import('node:child_process').SpawnSyncOptions} [opts] */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/**
 * Runs a build step with its (long, warning-laden) output in a log file; the log's end is shown on failure.
 * @param {string} cmd @param {string[]} args @param {string} log
 */
function runLogged(cmd, args, log) {
  const fd = fs.openSync(log, 'a');
  try {
    const r = spawnSync(cmd, args, { stdio: ['ignore', fd, fd] });
    if (r.status !== 0) {
      const text = fs.readFileSync(log, 'utf8');
      throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}); the end of ${log}:\n${text.slice(-3000)}`);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The llama.cpp source bundle shipped in node-llama-cpp (installed into .bench-deps/ on first use). */
function sourceBundle() {
  const deps = path.join(ROOT, '.bench-deps');
  const bundle = path.join(deps, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');
  if (!fs.existsSync(bundle)) {
    fs.mkdirSync(deps, { recursive: true });
    if (!fs.existsSync(path.join(deps, 'package.json'))) fs.writeFileSync(path.join(deps, 'package.json'), '{"name":"ghostline-bench-deps","private":true}\n');
    // --ignore-scripts: its postinstall would look for prebuilt binaries; only the source is needed here.
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=optional', `node-llama-cpp@${NODE_LLAMA_CPP}`], { cwd: deps });
  }
  return bundle;
}

/** Path of a built llama-server, building it first when the cache has none (about 6 minutes on 2 cores). */
function ensureBinary() {
  if (fs.existsSync(BINARY)) return BINARY;
  const src = path.join(BUILD, 'src');
  fs.rmSync(BUILD, { recursive: true, force: true });
  fs.mkdirSync(BUILD, { recursive: true });
  console.error(`[llama-server] building llama.cpp's server from node-llama-cpp ${NODE_LLAMA_CPP}'s source into ${BUILD} (once)`);
  run('git', ['clone', '-q', sourceBundle(), src]);
  const cmakeArgs = [
    '-S',
    src,
    '-B',
    path.join(BUILD, 'build'),
    '-DCMAKE_BUILD_TYPE=Release',
    '-DLLAMA_CURL=OFF',
    '-DLLAMA_BUILD_TESTS=OFF',
    '-DLLAMA_BUILD_EXAMPLES=OFF',
  ];
  const log = path.join(BUILD, 'build.log');
  runLogged('cmake', cmakeArgs, log);
  runLogged('cmake', ['--build', path.join(BUILD, 'build'), '--target', 'llama-server', `-j${Math.max(1, os.cpus().length)}`], log);
  if (!fs.existsSync(BINARY)) throw new Error(`the build finished without ${BINARY}`);
  return BINARY;
}

const QUANTIZE = path.join(BUILD, 'build', 'bin', 'llama-quantize');

/**
 * Path of a built llama-quantize (llama.cpp's own quantizer, the tool that writes the K-quant GGUF files users
 * download), built into the same build folder as llama-server: only its own sources compile.
 */
function ensureQuantize() {
  if (fs.existsSync(QUANTIZE)) return QUANTIZE;
  ensureBinary();
  const log = path.join(BUILD, 'build.log');
  runLogged('cmake', ['--build', path.join(BUILD, 'build'), '--target', 'llama-quantize', `-j${Math.max(1, os.cpus().length)}`], log);
  if (!fs.existsSync(QUANTIZE)) throw new Error(`the build finished without ${QUANTIZE}`);
  return QUANTIZE;
}

/**
 * The shipped default model as GGUF (from its model.safetensors), cached by a hash of the weights: every clone
 * of the same model shares one file, and files of other weights (an older model) are removed when a new one is
 * written, so the cache does not grow with each checkout.
 * 'f32' (default) or 'q8_0': ggml's Q8_0 codes are exactly those of the shipped int8 ONNX (src/converter/quantize.ts),
 * so the parity tests serve the same weights the local engine runs.
 * @param {'f32' | 'q8_0'} [weights]
 */
function ensureGguf(weights = 'f32') {
  const dir = path.join(ROOT, 'models', 'ghostline-code-small');
  const key = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(dir, 'model.safetensors')))
    .digest('hex')
    .slice(0, 16);
  const suffix = weights === 'q8_0' ? '-q8_0.gguf' : '.gguf';
  const name = `ghostline-code-small-${key}${suffix}`;
  const out = path.join(CACHE, name);
  if (!fs.existsSync(out)) {
    fs.mkdirSync(CACHE, { recursive: true });
    const flags = weights === 'q8_0' ? ['--q8_0'] : [];
    run('/usr/bin/python3', ['-m', 'tools.model.export_gguf', dir, `${out}.tmp`, ...flags], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    fs.renameSync(`${out}.tmp`, out);
    for (const f of fs.readdirSync(CACHE)) {
      const sameKind = weights === 'q8_0' ? f.endsWith('-q8_0.gguf') : f.endsWith('.gguf') && !f.endsWith('-q8_0.gguf');
      if (f !== name && f.startsWith('ghostline-code-small-') && sameKind) fs.rmSync(path.join(CACHE, f), { force: true });
    }
  }
  return out;
}

/**
 * Starts llama-server on 127.0.0.1 at a free port with the default model and waits until /health says ok.
 * @param {{ parallel?: number, extraArgs?: string[], weights?: 'f32' | 'q8_0', model?: string, contextSize?: number }} [opts]
 *   model: another GGUF than the default model's (benchmarks); contextSize: -c (512 a slot by default).
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>}
 */
async function startLlamaServer(opts = {}) {
  const binary = ensureBinary();
  const model = opts.model ?? ensureGguf(opts.weights);
  const port = await freePort();
  const args = [
    '-m',
    model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-np',
    String(opts.parallel ?? 1),
    '-c',
    String(opts.contextSize ?? 512 * (opts.parallel ?? 1)),
    '-t',
    '2',
    '--no-webui',
    ...(opts.extraArgs ?? []),
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => {
    log = (log + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited (${child.exitCode}):\n${log}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`llama-server did not become healthy within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = require('node:net').createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

module.exports = { ensureBinary, ensureGguf, ensureQuantize, startLlamaServer, BINARY, LLAMA_SOURCE };

if (require.main === module) console.log(process.argv[2] === '--quantize' ? ensureQuantize() : ensureBinary());
