#!/usr/bin/env node
// `npm run test:fuzz [-- --scale N --seed S]`: the property-based tests (test/**/*.property.test.ts) in long mode:
// N times the cases `npm test` runs (default 20) with a fresh seed, printed so that a failure can be replayed
// with `--seed`. `npm test` runs the same properties with seed 42 and the base counts.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
/**
 * @param {string} name
 * @param {string} fallback
 */
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const scale = opt('scale', '20');
const seed = opt('seed', String(Math.floor(Math.random() * 2 ** 31)));

/**
 * @param {string} cmd
 * @param {string[]} argv
 * @param {Record<string, string>} [env]
 */
const run = (cmd, argv, env = {}) => {
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run(process.execPath, ['esbuild.js']);
run(process.execPath, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-p', '.']);

/** @type {string[]} */
const files = [];
/** @param {string} dir */
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.property.test.js')) files.push(path.relative(ROOT, p));
  }
};
walk(path.join(ROOT, 'out', 'test'));
console.log(`[fuzz] ${files.length} files, seed ${seed}, ${scale}x the CI cases`);
run(process.execPath, ['--test', '--test-concurrency=1', ...files.sort()], { FUZZ_SEED: seed, FUZZ_SCALE: scale });
console.log(`[fuzz] passed (seed ${seed}, scale ${scale})`);
