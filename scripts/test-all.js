#!/usr/bin/env node
// `npm test`: everything, in order, with a summary at the end.
//   1. build         node esbuild.js
//   2. typecheck     tsc -p .  (into a fresh out/: a test file renamed away must not linger there), and
//                    tsc -p tsconfig.scripts.json (checkJs on scripts/ and test/e2e/)
//   3. lint          biome ci . (lint rules and formatting; `npm run format` fixes what it can)
//   4. unit          node --test --test-concurrency=1 <out/test/**/*.test.js, except the tiers below,
//                    integration/, e2e/ and package/>
//   5. root          *.root.test.js: tests that need root (a tmpfs mounted for a real full disk)
//   6. llama-server  *.llama.test.js: tests against a real llama-server (built once from source: cmake, git)
//   6b. gpu          *.gpu.test.js: onnxruntime's WebGPU provider on SwiftShader (chromium's Vulkan on the CPU)
//   7. package       node scripts/package.js --all (one .vsix per platform, each checked), then
//                    test/package/vsix.test.js reads every .vsix
//   7b. platforms    node scripts/smoke-packaged.js: the linux-x64, linux-arm64 (qemu-user) and win32-x64 (Wine)
//                    packages run with Node for their platform (needs root once, for apt and binfmt_misc)
//   8. code-server   node scripts/setup-code-server.js  (once; cached in .e2e/)
//   9. integration   node scripts/run-integration.js    (test/integration in a real extension host)
//   9b. package smoke node scripts/run-integration.js --vsix ghostline-<this platform>.vsix --grep ^platform\.itest
//                    (test/integration/platform.itest.ts against the installed package: what CI's matrix runs)
//  10. browser e2e   node test/e2e/browser.e2e.js --vsix ghostline-<this platform>.vsix (the package installed
//                    into a clean code-server profile: what users install, not this folder)
// Options: --unit (steps 1-4 only, for contributors without root or cmake; it says what it leaves out),
//          --no-e2e (skip step 10), --no-integration (skip step 9).
// Exit code: 0 when every step that ran passed.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const noE2e = args.includes('--no-e2e');
const noIntegration = args.includes('--no-integration');

/** Test files that need more than Node: their own steps, left out of `test:unit` (with a word on why). */
const TIERS = {
  root: { suffix: '.root.test.js', needs: 'root (a tmpfs is mounted for a real full disk)' },
  llama: { suffix: '.llama.test.js', needs: 'a llama-server built from source (cmake, g++, git; once, into ~/.cache/ghostline)' },
  gpu: { suffix: '.gpu.test.js', needs: "a Vulkan device: SwiftShader from chromium's package and the Vulkan loader (libvulkan1)" },
};
/** @param {string} f */
const tierOf = (f) => Object.values(TIERS).find((t) => f.endsWith(t.suffix));

// Node 20's `node --test <dir>` runs every .js file under a folder named `test`, including the integration
// modules that need the `vscode` API, and it does not expand globs: list the test files ourselves.
function allTestFiles() {
  const base = path.join(ROOT, 'out', 'test');
  /** @type {string[]} */
  const out = [];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!(dir === base && (e.name === 'integration' || e.name === 'e2e' || e.name === 'package'))) walk(p);
      } else if (e.name.endsWith('.test.js')) {
        out.push(path.relative(ROOT, p));
      }
    }
  };
  if (fs.existsSync(base)) walk(base);
  return out.sort();
}

const unitTestFiles = () => allTestFiles().filter((f) => !tierOf(f));
/** @param {{ suffix: string }} tier */
const tierFiles = (tier) => allTestFiles().filter((f) => f.endsWith(tier.suffix));
/** @param {string[]} files */
const nodeTest = (files) => run(node, ['--test', '--test-concurrency=1', ...files]);

/** This platform's .vsix, which the browser e2e installs. */
function hostVsix() {
  const { TARGETS, hostTarget } = require('./vsix-targets');
  const t = hostTarget();
  return TARGETS[t] ? path.join(ROOT, `ghostline-${t}.vsix`) : null;
}

/**
 * @param {string} cmd
 * @param {string[]} argv
 * @returns {Promise<number | string>} the exit code, or `signal <name>`
 */
function run(cmd, argv) {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['inherit', 'pipe', 'pipe'] });
    const out = failureCollector(process.stdout);
    const err = failureCollector(process.stderr);
    child.stdout.on('data', out.push);
    child.stderr.on('data', err.push);
    child.on('error', (e) => {
      console.error(`[test] ${cmd}: ${e.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => {
      out.end();
      err.end();
      resolve(code === null ? `signal ${signal}` : code);
    });
  });
}

/**
 * The failures each step printed, repeated under the summary: a CI log is often read from its end only, and a
 * failing test's name and message would otherwise be hundreds of lines above it.
 * @type {string[]}
 */
const failureLines = [];
const MAX_FAILURE_LINES = 80;
/** node --test's `not ok N - name` (TAP), the integration runner's `FAIL file > name`, and what follows them. */
const FAILURE_START = /^\s*not ok \d+ - |^\[[\w-]+\] FAIL(?:ED:)? /;
const FAILURE_DETAIL = /^\s*(error|location|expected|actual|failureType):|^\s{8}\S|timed out after/;

/**
 * Passes a stream's output on unchanged and keeps its failure lines.
 * @param {NodeJS.WriteStream} sink
 */
function failureCollector(sink) {
  let partial = '';
  /** Lines left to look at for details after a failure's first line. */
  let detail = 0;
  /** @param {string} line */
  const see = (line) => {
    if (FAILURE_START.test(line)) detail = 12;
    else if (detail > 0 && !FAILURE_DETAIL.test(line)) {
      detail--;
      return;
    } else if (detail <= 0) return;
    if (failureLines.length < MAX_FAILURE_LINES) failureLines.push(line.slice(0, 400));
  };
  return {
    /** @param {Buffer} chunk */
    push: (chunk) => {
      sink.write(chunk);
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) see(l);
    },
    end: () => {
      if (partial) see(partial);
      partial = '';
    },
  };
}

const node = process.execPath;
const tsc = (() => {
  try {
    return require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    return null;
  }
})();

/** @type {{ name: string, run: () => Promise<number | string>, critical?: boolean, full?: boolean, skip?: boolean }[]} */
const steps = [
  { name: 'build', run: () => run(node, ['esbuild.js']), critical: true },
  {
    name: 'typecheck',
    run: async () => {
      if (!tsc) return 'typescript not installed';
      fs.rmSync(path.join(ROOT, 'out'), { recursive: true, force: true });
      const code = await run(node, [tsc, '-p', '.']);
      return code === 0 ? run(node, [tsc, '-p', 'tsconfig.scripts.json']) : code;
    },
    critical: true,
  },
  {
    name: 'lint',
    run: () => {
      const biome = (() => {
        try {
          return require.resolve('@biomejs/biome/bin/biome', { paths: [ROOT] });
        } catch {
          return null;
        }
      })();
      return biome ? run(node, [biome, 'ci', '--colors=off', '.']) : Promise.resolve('@biomejs/biome not installed');
    },
  },
  {
    name: 'unit',
    run: () => {
      const files = unitTestFiles();
      if (files.length === 0) return Promise.resolve('no unit tests found in out/test');
      return nodeTest(files);
    },
  },
  ...Object.entries(TIERS).map(([name, tier]) => ({
    name: { llama: 'llama-server', gpu: 'gpu (SwiftShader)' }[name] ?? name,
    run: () => {
      const files = tierFiles(tier);
      return files.length === 0 ? Promise.resolve(`no ${tier.suffix} files in out/test`) : nodeTest(files);
    },
    full: true,
  })),
  {
    name: 'package',
    run: async () => {
      const code = await run(node, ['scripts/package.js', '--all']);
      return code === 0 ? nodeTest(['out/test/package/vsix.test.js']) : code;
    },
    full: true,
  },
  // linux-x64 natively, linux-arm64 under qemu-user, win32-x64 under Wine: about 40 s once Node for each is cached.
  { name: 'platforms', run: () => run(node, ['scripts/smoke-packaged.js']), full: true },
  { name: 'code-server', run: () => run(node, ['scripts/setup-code-server.js']), critical: true, full: true },
  { name: 'integration', run: () => run(node, ['scripts/run-integration.js']), full: true, skip: noIntegration },
  {
    // The platform smoke of the CI matrix, here against the installed linux-x64 package.
    name: 'package smoke',
    run: () => {
      const vsix = hostVsix();
      if (!vsix || !fs.existsSync(vsix)) return Promise.resolve(`no .vsix for ${process.platform}-${process.arch}`);
      return run(node, ['scripts/run-integration.js', '--vsix', vsix, '--grep', '^platform\\.itest']);
    },
    full: true,
    skip: noIntegration,
  },
  {
    name: 'browser e2e',
    run: () => {
      const vsix = hostVsix();
      if (!vsix) return Promise.resolve(`no .vsix target for ${process.platform}-${process.arch}`);
      if (!fs.existsSync(vsix)) return Promise.resolve(`${path.basename(vsix)} was not built (the package step failed)`);
      return run(node, ['test/e2e/browser.e2e.js', '--vsix', vsix]);
    },
    full: true,
    skip: noE2e,
  },
];

async function main() {
  const t0 = Date.now();
  const results = [];
  let blocked = null;
  for (const step of steps) {
    if (step.skip || (unitOnly && step.full)) {
      results.push({ name: step.name, status: 'skipped', ms: 0 });
      continue;
    }
    if (blocked) {
      results.push({ name: step.name, status: `not run (${blocked} failed)`, ms: 0 });
      continue;
    }
    console.log(`\n[test] ==== ${step.name} ====`);
    const s = Date.now();
    const code = await step.run();
    const ok = code === 0;
    results.push({ name: step.name, status: ok ? 'passed' : `FAILED (${code})`, ms: Date.now() - s });
    if (!ok && step.critical) blocked = step.name;
  }
  const failed = results.filter((r) => r.status !== 'passed' && r.status !== 'skipped');
  if (unitOnly) {
    for (const tier of Object.values(TIERS)) {
      const n = tierFiles(tier).length;
      if (n > 0) console.log(`[test] test:unit left out ${n} test file(s) (*${tier.suffix.replace('.js', '.ts')}) that need ${tier.needs}: npm test runs them`);
    }
    console.log('[test] test:unit left out packaging, the VS Code integration suite and the browser e2e: npm test runs them');
  }
  if (failureLines.length > 0) {
    console.log('\n[test] ==== failures (as printed above) ====');
    for (const l of failureLines) console.log(`[test] ${l}`);
  }
  console.log('\n[test] ==== summary ====');
  for (const r of results) {
    console.log(`[test]   ${r.name.padEnd(12)} ${r.status.padEnd(28)} ${r.ms ? `${(r.ms / 1000).toFixed(1)} s` : ''}`);
  }
  console.log(`[test] ${failed.length === 0 ? 'ALL PASSED' : `${failed.length} step(s) failed`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
