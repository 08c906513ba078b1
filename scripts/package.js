#!/usr/bin/env node
// npm run package [-- --all | --target linux-x64[,win32-x64,universal...]] [--out-dir DIR]
// Builds the production bundle once, then one .vsix per target (default: this machine's), each carrying only
// its own onnxruntime binding and library (scripts/vsix-targets.js). Every .vsix is checked after it is built
// (scripts/vsix-check.js): a package with a missing file, another platform's binary, a development file or
// over 40 MiB fails the command, so packaging cannot break silently.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { TARGETS, UNIVERSAL, hostTarget, nativeDir, nativeFiles, targetOf } = require('./vsix-targets');
const { checkVsix } = require('./vsix-check');
const { readFacts, requirementsOf } = require('./native-facts');

const root = path.resolve(__dirname, '..');

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {string[]} */
  const targets = [];
  let outDir = root;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--all') targets.push(...Object.keys(TARGETS), UNIVERSAL);
    else if (a === '--target') targets.push(...(argv[++i] ?? '').split(',').filter((t) => t));
    else if (a === '--out-dir') outDir = path.resolve(argv[++i] ?? '.');
    else throw new Error(`unknown option ${a} (--all, --target a,b, --out-dir DIR)`);
  }
  if (targets.length === 0) targets.push(hostTarget());
  for (const t of targets) if (t !== UNIVERSAL) targetOf(t); // an unknown target fails before anything is built
  return { targets: [...new Set(targets)], outDir };
}

/**
 * @param {string} target
 * @param {string} outDir
 */
function packageTarget(target, outDir) {
  const universal = target === UNIVERSAL;
  /** @type {string[]} */
  const natives = [];
  if (!universal) {
    const t = targetOf(target);
    const dir = nativeDir(t);
    for (const f of nativeFiles(t)) {
      if (!fs.existsSync(path.join(root, dir, f))) throw new Error(`${dir}/${f} is missing: run npm ci (onnxruntime-node ships it)`);
      natives.push(`!${dir}/${f}`);
    }
  }
  const ignore = path.join(os.tmpdir(), `ghostline-vscodeignore-${process.pid}-${target}`);
  const base = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
  fs.writeFileSync(ignore, `${base}\n${natives.join('\n')}\n`);
  const out = path.join(outDir, `ghostline-${target}.vsix`);
  fs.rmSync(out, { force: true });
  try {
    writeNativeRequirements(target);
    // No --target: the universal package, which the Marketplace serves where no platform package matches.
    const targetArgs = universal ? [] : ['--target', target];
    execFileSync(process.execPath, [require.resolve('@vscode/vsce/vsce', { paths: [root] }), 'package', ...targetArgs, '--ignoreFile', ignore, '--out', out], {
      cwd: root,
      stdio: 'inherit',
    });
  } finally {
    fs.rmSync(ignore, { force: true });
    // Only a package says which platform it is for: the development folder runs on any.
    fs.rmSync(path.join(root, 'dist', 'native.json'), { force: true });
  }
  return out;
}

/**
 * dist/native.json: what this target's binaries need from the machine (minimum macOS, glibc, the Visual C++
 * runtime DLLs), read from their headers. The engine checks it before it starts the worker.
 * @param {string} target
 */
function writeNativeRequirements(target) {
  const file = path.join(root, 'dist', 'native.json');
  if (target === UNIVERSAL) {
    fs.writeFileSync(file, `${JSON.stringify({ target, localEngine: false }, null, 2)}\n`);
    return;
  }
  const t = targetOf(target);
  const dir = path.join(root, nativeDir(t));
  const facts = [t.binding, t.runtime].map((f) => readFacts(fs.readFileSync(path.join(dir, f))));
  const onnxruntime = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'onnxruntime-node', 'package.json'), 'utf8')).version;
  const req = { target, onnxruntime, ...requirementsOf(facts[0], facts[1]) };
  fs.writeFileSync(file, `${JSON.stringify(req, null, 2)}\n`);
}

async function main() {
  const { targets, outDir } = parseArgs(process.argv.slice(2));
  fs.mkdirSync(outDir, { recursive: true });
  // Stale source maps from a development build are not packaged (.vscodeignore takes dist/*.js only).
  execFileSync(process.execPath, ['esbuild.js', '--production'], { cwd: root, stdio: 'inherit' });
  let failed = 0;
  for (const target of targets) {
    const out = packageTarget(target, outDir);
    const problems = await checkVsix(out, target);
    const mb = (fs.statSync(out).size / 2 ** 20).toFixed(1);
    if (problems.length === 0) {
      console.log(`${path.relative(process.cwd(), out)}: ${mb} MiB, contents checked`);
    } else {
      failed++;
      console.error(`${path.relative(process.cwd(), out)}: ${mb} MiB, WRONG:\n  ${problems.join('\n  ')}`);
    }
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`npm run package: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  },
);
