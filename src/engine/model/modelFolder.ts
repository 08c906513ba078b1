import type { EngineOptions } from '../shared/engineOptions';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, type PathModule } from '../../platform/pathInside';
import { ModelFolderError } from '../shared/errors';
import { ONNX_PREFERENCE } from '../shared/onnxPreference';
import { readJsonObjectFile } from '../shared/jsonObjectFile';

export interface ModelFolder {
  dir: string;
  name: string;
  config: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  tokenizerJson: object;
  tokenizerConfig: Record<string, unknown>;
  onnxPath: string;
}

export type ReadModelFolderOptions = Pick<EngineOptions, 'onnxFile'>;

/** Reads and checks everything in a model folder except the ONNX graph itself (the session does that). */
export function readModelFolder(dir: string, opts: ReadModelFolderOptions = {}): ModelFolder {
  dir = path.resolve(dir);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new ModelFolderError(dir, 'model folder not found');
  }
  const config = readJson(dir, 'config.json', true)!;
  const generationConfig = readJson(dir, 'generation_config.json', false) ?? {};
  const tokenizerJson = readJson(dir, 'tokenizer.json', true)!;
  const tokenizerConfig = readJson(dir, 'tokenizer_config.json', false) ?? {};
  const model = (tokenizerJson as { model?: { type?: string; vocab?: unknown } }).model;
  if (!model || typeof model !== 'object' || !model.vocab) {
    throw new ModelFolderError(path.join(dir, 'tokenizer.json'), 'has no "model" with a "vocab": not a Hugging Face tokenizer.json');
  }
  return {
    dir,
    name: path.basename(dir),
    config,
    generationConfig,
    tokenizerJson,
    tokenizerConfig,
    onnxPath: regularFile(pickOnnxFile(dir, opts.onnxFile)),
  };
}

/** onnxruntime reads the graph itself: a FIFO or a device there would block or exhaust the worker. */
function regularFile(p: string): string {
  if (!fs.statSync(p).isFile()) throw new ModelFolderError(p, 'is not a regular file');
  return p;
}

export function pickOnnxFile(dir: string, requested?: string): string {
  if (requested) {
    if (!isOnnxFileInside(dir, requested)) {
      throw new ModelFolderError(dir, `the ONNX file must be a name inside the model folder, got ${JSON.stringify(requested)}`);
    }
    const candidates = [path.resolve(dir, requested), path.resolve(dir, 'onnx', requested)];
    const found = candidates.find((p) => fs.existsSync(p));
    if (!found) throw new ModelFolderError(candidates[0], 'the requested ONNX file does not exist');
    return found;
  }
  for (const sub of ['onnx', '.']) {
    for (const name of ONNX_PREFERENCE) {
      const p = path.join(dir, sub, name);
      if (fs.existsSync(p)) return path.normalize(p);
    }
  }
  // Any other .onnx file, so unusual names still load.
  for (const sub of ['onnx', '.']) {
    const d = path.join(dir, sub);
    if (!fs.existsSync(d)) continue;
    const other = fs
      .readdirSync(d)
      .filter((f) => f.endsWith('.onnx'))
      .sort();
    if (other.length > 0) return path.join(d, other[0]);
  }
  throw new ModelFolderError(path.join(dir, 'onnx'), 'no .onnx model file in the folder or its onnx/ subfolder');
}

/**
 * Whether `ghostline.modelFile` names a file inside the model folder. A workspace may set it, and settings sync
 * between machines, so the rule is the same on every platform: relative on posix *and* Windows (no `/x`,
 * `C:\x`, drive-relative `C:x`, UNC `\\srv\share`), no `..` segment with either separator, and resolving
 * strictly inside `dir` (without case on Windows and macOS). `pathMod` is node:path; tests pass path.win32.
 */
export function isOnnxFileInside(dir: string, requested: string, pathMod: PathModule = path): boolean {
  if (path.posix.isAbsolute(requested) || path.win32.isAbsolute(requested) || /^[A-Za-z]:/.test(requested)) return false;
  if (requested.split(/[\\/]/).includes('..')) return false;
  return isInside(dir, pathMod.resolve(dir, requested), { path: pathMod });
}

/** A JSON object file of a model folder (readJsonObjectFile); null when an optional one is absent. */
export function readJson(dir: string, file: string, required: boolean): Record<string, unknown> | null {
  const p = path.join(dir, file);
  if (!fs.existsSync(p)) {
    if (required) throw new ModelFolderError(p, 'missing');
    return null;
  }
  return readJsonObjectFile(p, (f, detail) => new ModelFolderError(f, detail));
}

/** All end-of-sequence ids the folder declares (generation_config.json, config.json, tokenizer_config.json). */
export function eosIds(folder: ModelFolder, tokenId: (t: string) => number | undefined): number[] {
  const ids = new Set<number>();
  const add = (v: unknown) => {
    if (typeof v === 'number') ids.add(v);
    else if (Array.isArray(v)) v.forEach(add);
  };
  add(folder.generationConfig.eos_token_id);
  add(folder.config.eos_token_id);
  const eosTok = folder.tokenizerConfig.eos_token;
  const eosText = typeof eosTok === 'string' ? eosTok : (eosTok as { content?: string } | undefined)?.content;
  if (eosText) {
    const id = tokenId(eosText);
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}
