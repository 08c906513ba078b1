#!/usr/bin/env node
// npm run package [-- --target linux-x64]: a platform-specific .vsix carrying only that platform's
// onnxruntime binaries (the npm package holds all of them: ~290 MB unpacked).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const argv = process.argv.slice(2);
const targetArg = argv.indexOf('--target');
const target = targetArg >= 0 ? argv[targetArg + 1] : `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch}`;
const [platform, arch] = target.split('-');
const ortBin = 'node_modules/onnxruntime-node/bin/napi-v6';
const others = [];
for (const p of fs.readdirSync(path.join(root, ortBin))) {
  for (const a of fs.readdirSync(path.join(root, ortBin, p))) {
    if (p !== platform || a !== arch) others.push(`${ortBin}/${p}/${a}/**`);
  }
}
const ignore = path.join(os.tmpdir(), `ghostline-vscodeignore-${process.pid}`);
fs.writeFileSync(ignore, `${fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8')}\n${others.join('\n')}\n`);
const out = path.join(root, `ghostline-${target}.vsix`);
/**
 * @param {string} cmd
 * @param {string[]} args
 */
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
run(process.execPath, ['esbuild.js', '--production']);
run(process.execPath, [
  require.resolve('@vscode/vsce/vsce', { paths: [root] }),
  'package',
  '--target',
  target,
  '--ignoreFile',
  ignore,
  '--out',
  out,
  '--allow-missing-repository',
  '--skip-license',
]);
fs.rmSync(ignore);
console.log(`${path.basename(out)}: ${(fs.statSync(out).size / 1e6).toFixed(1)} MB`);
