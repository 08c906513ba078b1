import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeFolder } from '../platform/folderSwap';
import { isInside, type PathModule } from '../platform/pathInside';
import { INCOMPLETE_MARKER, MANIFEST, type ModelManifest } from './downloader';

/** Models downloaded under `<storageDir>/models/*`. No `vscode` import. */

export interface InstalledModel {
  /** `owner/name` from the manifest, else from the folder name (`owner--name`). */
  repo: string;
  dir: string;
  /** Total bytes of the folder (parts of an interrupted download included). */
  sizeBytes: number;
  /** ONNX files, relative to the folder (e.g. `onnx/model_quantized.onnx`). */
  onnxFiles: string[];
  revision?: string;
  commit?: string;
  downloadedAt?: string;
  /** Converted on this machine from a checkpoint (src/hub/installCheckpoint.ts). */
  converted?: boolean;
}

export interface PartialDownload {
  repo: string;
  dir: string;
  sizeBytes: number;
}

function walk(dir: string, rel = ''): { rel: string; size: number }[] {
  const out: { rel: string; size: number }[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(dir, r));
    else if (e.isFile()) {
      try {
        out.push({ rel: r, size: fs.statSync(path.join(dir, r)).size });
      } catch {
        /* removed meanwhile */
      }
    }
  }
  return out;
}

function readManifest(dir: string): ModelManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as ModelManifest;
  } catch {
    return undefined;
  }
}

function repoFromFolder(name: string): string {
  const i = name.indexOf('--');
  return i < 0 ? name : `${name.slice(0, i)}/${name.slice(i + 2)}`;
}

/**
 * Folders being written by a tool that renames them when done (`x.tmp`, `x.tmp-123`, `x.partial`, `x~`):
 * neither installed nor resumable. Dot-folders are skipped too. (Ghostline's own conversions are written
 * outside `models/` and moved in whole; this guards against anything else writing here.)
 */
const TEMP_FOLDER = /(\.(tmp|temp|partial|converting|incomplete)([-._][A-Za-z0-9]+)*|~)$/i;

function scan(storageDir: string): { installed: InstalledModel[]; partial: PartialDownload[] } {
  const root = path.join(storageDir, 'models');
  const installed: InstalledModel[] = [];
  const partial: PartialDownload[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return { installed, partial };
  }
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('.') || TEMP_FOLDER.test(e.name)) continue;
    const dir = path.join(root, e.name);
    const files = walk(dir);
    const names = new Set(files.map((f) => f.rel));
    const sizeBytes = files.reduce((s, f) => s + f.size, 0);
    const manifest = readManifest(dir);
    const repo = manifest?.repo ?? repoFromFolder(e.name);
    const onnxFiles = files
      .map((f) => f.rel)
      .filter((r) => r.endsWith('.onnx'))
      .sort();
    const complete = names.has('config.json') && names.has('tokenizer.json') && onnxFiles.length > 0 && !names.has(INCOMPLETE_MARKER);
    if (complete) {
      const converted = (manifest as { converted?: unknown } | undefined)?.converted !== undefined;
      installed.push({
        repo,
        dir,
        sizeBytes,
        onnxFiles,
        revision: manifest?.revision,
        commit: manifest?.commit,
        downloadedAt: manifest?.downloadedAt,
        converted,
      });
    } else if (files.length > 0) {
      partial.push({ repo, dir, sizeBytes });
    }
  }
  installed.sort((a, b) => a.repo.localeCompare(b.repo));
  partial.sort((a, b) => a.repo.localeCompare(b.repo));
  return { installed, partial };
}

/**
 * Complete model folders: config.json + tokenizer.json + an .onnx file, and no download in progress.
 * Only `<storageDir>/models/*`: checkpoints (`checkpoints/`) and conversions in progress (`converting/`) never are.
 */
export function listInstalledModels(storageDir: string): InstalledModel[] {
  return scan(storageDir).installed;
}

/** Folders of interrupted downloads (resumable by downloading the same repo again). */
export function listPartialDownloads(storageDir: string): PartialDownload[] {
  return scan(storageDir).partial;
}

/** Whether `dir` is inside `<storageDir>/models/` (without case on Windows and macOS, as isCheckpointFolder). */
export function isModelFolder(storageDir: string, dir: string, pathMod: PathModule = path): boolean {
  return isInside(pathMod.resolve(storageDir, 'models'), dir, { path: pathMod });
}

/**
 * Removes an installed (or partial) model folder whole, or not at all when a file in it is open (Windows: the
 * model in use); refuses paths outside `<storageDir>/models/`.
 */
export async function removeInstalledModel(storageDir: string, dir: string, log?: (m: string) => void): Promise<void> {
  if (!isModelFolder(storageDir, dir)) throw new Error(`${dir} is not a downloaded model folder`);
  await removeFolder(path.resolve(dir), { log });
}
