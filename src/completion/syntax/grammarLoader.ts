import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';
import grammars from './grammars.json';
import type { GrammarSpec } from './languages';

export type TreeSitterModule = typeof TreeSitter;

interface WasmEntry {
  package: string;
  path: string;
}

/** Folder esbuild.js copies the .wasm files into, next to the bundle (dist/tree-sitter/). */
const BUNDLED_WASM_FOLDER = 'tree-sitter';

/**
 * Where a .wasm file is: in `wasmDir` when given; else next to the bundle (dist/tree-sitter/, where
 * __dirname is dist/), else in its npm package (tsc output in out/, tests, bench).
 */
function wasmPath(entry: WasmEntry, wasmDir?: string): string {
  const file = path.basename(entry.path);
  if (wasmDir) return path.join(wasmDir, file);
  const bundled = path.join(__dirname, BUNDLED_WASM_FOLDER, file);
  if (fs.existsSync(bundled)) return bundled;
  try {
    return require.resolve(`${entry.package}/${entry.path}`);
  } catch {
    return bundled;
  }
}

export const runtimeWasm = (wasmDir?: string): string => wasmPath(grammars.runtime, wasmDir);
export const grammarWasm = (grammar: GrammarSpec['grammar'], wasmDir?: string): string => wasmPath(grammars.grammars[grammar], wasmDir);

// One runtime per process: web-tree-sitter keeps its WebAssembly module in a module-level variable, and
// every Language is linked into it.
let runtime: Promise<TreeSitterModule> | null = null;

/** Loads (once) and initialises the tree-sitter runtime; a failed start is retried on the next call. */
export function loadRuntime(wasmFile: string): Promise<TreeSitterModule> {
  if (!runtime) {
    const started = (async () => {
      await fs.promises.access(wasmFile, fs.constants.R_OK);
      // Required lazily: the runtime's JavaScript is only evaluated once a supported language is opened.
      const ts = require('@vscode/tree-sitter-wasm') as TreeSitterModule;
      await ts.Parser.init({ locateFile: () => wasmFile });
      return ts;
    })();
    runtime = started;
    started.catch(() => {
      if (runtime === started) runtime = null;
    });
  }
  return runtime;
}

const languages = new Map<string, Promise<TreeSitter.Language>>();

/** Loads a grammar .wasm into the runtime, once per file; a failure is not cached here. */
export function loadLanguage(ts: TreeSitterModule, wasmFile: string): Promise<TreeSitter.Language> {
  let p = languages.get(wasmFile);
  if (!p) {
    const loading = fs.promises.readFile(wasmFile).then((bytes) => ts.Language.load(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
    p = loading;
    languages.set(wasmFile, loading);
    loading.catch(() => {
      if (languages.get(wasmFile) === loading) languages.delete(wasmFile);
    });
  }
  return p;
}
