#!/usr/bin/env node
// `npm test`: everything, in order, with a summary at the end.
//   1. build         node esbuild.js
//   2. typecheck     tsc -p .  (into a fresh out/: a test file renamed away must not linger there), and
//                    tsc -p tsconfig.scripts.json (checkJs on scripts/ and test/e2e/)
//   3. lint          biome ci . (lint rules and formatting; `npm run format` fixes what it can)
//   4. unit          node --test --test-concurrency=1 <out/test/**/*.test.js, except integration/ and e2e/>
//   5. code-server   node scripts/setup-code-server.js  (once; cached in .e2e/)
//   6. integration   node scripts/run-integration.js    (test/integration in a real extension host)
//   7. browser e2e   node test/e2e/browser.e2e.js       (ghost text in the real UI)
// Options: --unit (steps 1-4 only), --no-e2e (skip step 7), --no-integration (skip step 6).
// Exit code: 0 when every step that ran passed.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const noE2e = args.includes('--no-e2e');
const noIntegration = args.includes('--no-integration');

// Node 20's `node --test <dir>` runs every .js file under a folder named `test`, including the integration
// modules that need the `vscode` API, and it does not expand globs: list the unit test files ourselves.
function unitTestFiles() {
  const base = path.join(ROOT, 'out', 'test');
  /** @type {string[]} */
  const out = [];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!(dir === base && (e.name === 'integration' || e.name === 'e2e'))) walk(p);
      } else if (e.name.endsWith('.test.js')) {
        out.push(path.relative(ROOT, p));
      }
    }
  };
  if (fs.existsSync(base)) walk(base);
  return out.sort();
}

/**
 * @param {string} cmd
 * @param {string[]} argv
 * @returns {Promise<number | string>} the exit code, or `signal <name>`
 */
function run(cmd, argv) {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: 'inherit' });
    child.on('error', (err) => {
      console.error(`[test] ${cmd}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code === null ? `signal ${signal}` : code));
  });
}

const node = process.execPath;
const tsc = (() => {
  try {
    return require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    return null;
  }
})();

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
      return run(node, ['--test', '--test-concurrency=1', ...files]);
    },
  },
  { name: 'code-server', run: () => run(node, ['scripts/setup-code-server.js']), critical: true, browser: true },
  { name: 'integration', run: () => run(node, ['scripts/run-integration.js']), browser: true, skip: noIntegration },
  { name: 'browser e2e', run: () => run(node, ['test/e2e/browser.e2e.js']), browser: true, skip: noE2e },
];

async function main() {
  const t0 = Date.now();
  const results = [];
  let blocked = null;
  for (const step of steps) {
    if (step.skip || (unitOnly && step.browser)) {
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
