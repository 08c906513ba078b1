import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeFolder } from '../platform/folderSwap';
import { isInside, type PathModule } from '../platform/pathInside';
import { INCOMPLETE_MARKER, MANIFEST, type ModelManifest } from './downloader';
import { modelFolderName } from './recommended';

/**
 * Where checkpoints live: `<storage>/checkpoints/<owner>--<name>/` (downloaded safetensors, never listed as a
 * model) and `<storage>/converting/<owner>--<name>/` (the converter's output while it is written). Only a
 * whole converted folder is moved into `<storage>/models/`. No `vscode` import.
 */

export interface StoredCheckpoint {
  repo: string;
  dir: string;
  sizeBytes: number;
  /** The download finished (no `.incomplete` marker, a manifest). */
  complete: boolean;
}

/** `pathMod` (here and below) is node:path; tests pass path.win32 to check Windows paths on Linux. */
export function checkpointDir(storageDir: string, repo: string, pathMod: PathModule = path): string {
  return pathMod.join(pathMod.resolve(storageDir), 'checkpoints', modelFolderName(repo));
}

/** Scratch folder of one conversion; removed when it ends, whatever the outcome. */
export function convertingDir(storageDir: string, repo: string, pathMod: PathModule = path): string {
  return pathMod.join(pathMod.resolve(storageDir), 'converting', modelFolderName(repo));
}

/**
 * Whether `dir` is a folder inside `<storageDir>/checkpoints/`. Without case on Windows and macOS: VS Code's
 * global storage path has a lowercase drive letter (`c:\Users\...`) where path.resolve gives `C:\`.
 */
export function isCheckpointFolder(storageDir: string, dir: string, pathMod: PathModule = path): boolean {
  return isInside(pathMod.join(pathMod.resolve(storageDir), 'checkpoints'), dir, { path: pathMod });
}

/** Total bytes of the files under `dir` (0 when it does not exist). */
export function folderBytes(dir: string): number {
  let n = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += folderBytes(p);
    else if (e.isFile()) {
      try {
        n += fs.statSync(p).size;
      } catch {
        /* removed meanwhile */
      }
    }
  }
  return n;
}

/** Checkpoints on disk, whole or partly downloaded. */
export function listCheckpoints(storageDir: string): StoredCheckpoint[] {
  const root = path.join(path.resolve(storageDir), 'checkpoints');
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: StoredCheckpoint[] = [];
  for (const e of entries) {
    // `.tmp-old-`: a removed folder that Windows kept locked (folderSwap.ts), no longer a checkpoint.
    if (!e.isDirectory() || e.name.startsWith('.') || e.name.includes('.tmp-old-')) continue;
    const dir = path.join(root, e.name);
    let manifest: ModelManifest | undefined;
    try {
      manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as ModelManifest;
    } catch {
      manifest = undefined;
    }
    const i = e.name.indexOf('--');
    const repo = manifest?.repo ?? (i < 0 ? e.name : `${e.name.slice(0, i)}/${e.name.slice(i + 2)}`);
    const complete = manifest !== undefined && !fs.existsSync(path.join(dir, INCOMPLETE_MARKER));
    out.push({ repo, dir, sizeBytes: folderBytes(dir), complete });
  }
  return out.sort((a, b) => a.repo.localeCompare(b.repo));
}

/** Removes a checkpoint folder whole (folderSwap.ts); refuses paths outside `<storageDir>/checkpoints/`. */
export async function removeCheckpoint(storageDir: string, dir: string, log?: (m: string) => void): Promise<void> {
  if (!isCheckpointFolder(storageDir, dir)) throw new Error(`${dir} is not a downloaded checkpoint folder`);
  await removeFolder(path.resolve(dir), { log, hint: 'Close the program using it (a running conversion?), then delete it again.' });
}
