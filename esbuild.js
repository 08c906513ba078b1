// Bundles the extension, the inference worker, the CLI and the tokenizer check's thread into dist/.
// onnxruntime-node stays external: it carries native binaries that are loaded from node_modules.
// The tree-sitter runtime and grammar .wasm files (src/completion/syntax/grammars.json) are copied into
// dist/tree-sitter/, where the bundled SyntaxRefiner looks for them first.
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');
const grammars = require('./src/completion/syntax/grammars.json');

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
  // jsonc-parser's `main` is a UMD build whose relative requires esbuild cannot follow ("Cannot find module
  // './impl/format'" at run time); its ES module build bundles. Node (the tests, out/) loads the UMD one.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  logLevel: 'warning',
};

/** @type {import('esbuild').BuildOptions[]} */
const entries = [
  { entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  { entryPoints: ['src/engine/worker/worker.ts'], outfile: 'dist/worker.js' },
  // The tokenizer check's thread (src/engine/model/tokenizerProbe.ts), started from any of the three bundles.
  { entryPoints: ['src/engine/model/tokenizerProbeThread.ts'], outfile: 'dist/tokenizerProbeThread.js' },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
];

function copyTreeSitterWasm() {
  const dir = path.join(__dirname, 'dist', 'tree-sitter');
  fs.mkdirSync(dir, { recursive: true });
  for (const e of [grammars.runtime, ...Object.values(grammars.grammars)]) {
    fs.copyFileSync(require.resolve(`${e.package}/${e.path}`), path.join(dir, path.basename(e.path)));
  }
}

async function main() {
  copyTreeSitterWasm();
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
