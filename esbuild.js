// Bundles the extension, the inference worker and the CLI into dist/.
// onnxruntime-node stays external: it carries native binaries that are loaded from node_modules.
const esbuild = require('esbuild');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  external: ['vscode', 'onnxruntime-node'],
  logLevel: 'warning',
};

/** @type {import('esbuild').BuildOptions[]} */
const entries = [
  { entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  { entryPoints: ['src/engine/worker/worker.ts'], outfile: 'dist/worker.js' },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
];

async function main() {
  const contexts = await Promise.all(entries.map((e) => esbuild.context({ ...common, ...e })));
  if (watch) {
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
