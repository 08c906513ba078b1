import * as fs from 'node:fs';
import * as path from 'node:path';
import { convertCheckpoint } from '../converter/convert';
import { moveFolderInto } from '../platform/folderSwap';
import { samePath } from '../platform/pathInside';
import type { ConvertOptions, ConvertProgress, ConvertResult, Quant } from '../converter/types';
import { checkpointDir, convertingDir, folderBytes } from './checkpointStore';
import { downloadModel, MANIFEST, modelDir, type DownloadModelOptions, type DownloadProgress, type ModelManifest } from './downloader';
import { HubError, isHubError } from './hubErrors';
import { listRepoFiles, resolveEndpoint } from './hubClient';
import { listInstalledModels } from './installedModels';
import { checkpointFiles, commonFiles, ggufFiles, pickGgufFile, SAFETENSORS_FILE, SAFETENSORS_INDEX, type ModelFile } from './recommended';
import { shardNamesFromIndex } from './shardIndex';

/**
 * Download a Hugging Face safetensors checkpoint (or one GGUF file of a repo) and convert it to a Ghostline model
 * folder, no `vscode` import:
 * 1. config/tokenizer files and the shard index (when the repo has one) into `<storage>/checkpoints/<owner>--<name>/`;
 * 2. the weights: `model.safetensors`, or the shards the index names (checked to stay inside the repo);
 *    both steps through downloader.ts (resume, sha256, progress, cancel);
 * 3. the converter writes into `<storage>/converting/<owner>--<name>/model`, which is moved whole to
 *    `<storage>/models/<owner>--<name>/` at the end: a half-converted folder is never where models are listed.
 * The checkpoint is kept; the caller offers to delete it.
 */

export const NO_SAFETENSORS = 'this repo has no safetensors weights; Ghostline converts only safetensors';

export type InstallProgress =
  | { stage: 'resolve' }
  | { stage: 'download'; download: DownloadProgress }
  /** `convert` is undefined once, when the conversion starts. */
  | { stage: 'convert'; convert?: ConvertProgress };

export type Converter = (opts: ConvertOptions) => Promise<ConvertResult>;

export interface InstallCheckpointOptions extends Omit<DownloadModelOptions, 'files' | 'destDir' | 'onProgress'> {
  /**
   * A GGUF file in the repo (`sweep-next-edit-1.5b.q8_0.v2.gguf`): that file is downloaded (with the repo's
   * tokenizer.json when it has one) and converted, instead of safetensors weights.
   */
  gguf?: string;
  /** Weight format of the converted model (the converter's default, q4, when unset). */
  quant?: Quant;
  onProgress?: (p: InstallProgress) => void;
  /** The converter (tests inject one); default src/converter/convert.ts. */
  convert?: Converter;
  /**
   * Whether the engine has `dir` loaded. A folder in use is never replaced: on Windows its open files make
   * the replace fail, and anywhere the engine would go on with a model that is no longer on disk.
   */
  inUse?: (dir: string) => boolean;
}

export interface InstallCheckpointResult {
  repo: string;
  revision: string;
  commit?: string;
  /** The converted model folder, under `<storage>/models/`. */
  dir: string;
  checkpointDir: string;
  /** Bytes of the checkpoint folder now on disk (0 when there is none). */
  checkpointBytes: number;
  /** Bytes of the converted model folder. */
  modelBytes: number;
  /** The model was already converted: nothing was downloaded or converted. */
  reused: boolean;
  converted?: ConvertResult;
}

/** The manifest of a converted folder: the checkpoint it came from and how it was converted. */
interface ConvertedManifest extends ModelManifest {
  converted: { from: 'safetensors' | 'gguf'; quant: Quant; modelType: string; seconds: number };
}

/** A conversion that failed (not cancelled): the converter's message, and where the checkpoint is kept. */
export class ConvertFailedError extends Error {
  override readonly name = 'ConvertFailedError';
  constructor(
    message: string,
    readonly checkpointDir: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** The files of the converter's output, for the manifest. */
function listFiles(dir: string, rel = ''): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(dir, r));
    else if (e.isFile()) out.push({ path: r, size: fs.statSync(path.join(dir, r)).size });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Downloads a GGUF file and the repo's tokenizer files; resolves with the file fetched. A repo with no file of
 * that name (a catalog name that could not be checked against the hub, a repo that renamed its files) is listed,
 * and the GGUF the converter reads best is fetched instead (pickGgufFile: Q8_0 first), with a log line.
 */
async function downloadGguf(
  dl: Omit<DownloadModelOptions, 'files'>,
  file: string,
  onProgress?: (p: InstallProgress) => void,
): Promise<{ commit?: string; file: string }> {
  onProgress?.({ stage: 'resolve' });
  const download = async (f: string) =>
    (await downloadModel({ ...dl, files: ggufFiles(f), onProgress: (p) => onProgress?.({ stage: 'download', download: p }) })).commit;
  try {
    return { commit: await download(file), file };
  } catch (e) {
    const fileMissing = isHubError(e, 'not_found') && e.details.file === file && e.details.code !== 'RepoNotFound' && e.details.code !== 'RevisionNotFound';
    if (!fileMissing) throw e;
    const revision = dl.revision ?? 'main';
    const listing = await listRepoFiles(resolveEndpoint(dl.endpoint, dl.env), dl.repo, revision, dl);
    const other = pickGgufFile(listing.files.map((f) => f.rfilename));
    if (!other) {
      throw new HubError(
        'not_found',
        `${dl.repo}@${revision} has no ${file}, nor another GGUF file the converter reads (Q8_0, F16, BF16, Q4_0-Q5_1, K-quants from Q4_K)`,
        e.details,
      );
    }
    dl.log?.(`${dl.repo} has no ${file}: converting its ${other} instead`);
    return { commit: await download(other), file: other };
  }
}

/** Downloads the checkpoint's files; returns the commit and the weight files fetched. */
async function downloadCheckpoint(dl: Omit<DownloadModelOptions, 'files'>, onProgress?: (p: InstallProgress) => void): Promise<{ commit?: string }> {
  onProgress?.({ stage: 'resolve' });
  await downloadModel({ ...dl, files: checkpointFiles(), onProgress: undefined });
  const indexPath = path.join(dl.destDir!, SAFETENSORS_INDEX);
  const sharded = fs.existsSync(indexPath);
  const weights = sharded ? shardNamesFromIndex(fs.readFileSync(indexPath, 'utf8'), dl.repo) : [SAFETENSORS_FILE];
  const files: ModelFile[] = [...commonFiles(), ...(sharded ? [{ path: SAFETENSORS_INDEX }] : []), ...weights.map((p) => ({ path: p }))];
  try {
    const res = await downloadModel({ ...dl, files, onProgress: (p) => onProgress?.({ stage: 'download', download: p }) });
    return { commit: res.commit };
  } catch (e) {
    const missingWeights = isHubError(e, 'not_found') && !sharded && e.details.file === SAFETENSORS_FILE;
    if (missingWeights && e.details.code !== 'RepoNotFound' && e.details.code !== 'RevisionNotFound') {
      throw new HubError(
        'not_found',
        `${dl.repo}@${dl.revision ?? 'main'}: ${NO_SAFETENSORS} (neither ${SAFETENSORS_FILE} nor ${SAFETENSORS_INDEX}; it may ship only pytorch_model.bin).`,
        { ...e.details, code: 'NoSafetensors' },
      );
    }
    throw e;
  }
}

/** Downloads (or resumes) a checkpoint and converts it; resolves with the converted model folder. */
export async function installCheckpoint(opts: InstallCheckpointOptions): Promise<InstallCheckpointResult> {
  const { quant, onProgress, convert = convertCheckpoint, gguf, ...hub } = opts;
  // Where the path may point (no `..`, not absolute) the downloader checks for every file before any request.
  if (gguf !== undefined && !gguf.toLowerCase().endsWith('.gguf')) {
    throw new HubError('not_found', `${opts.repo}: ${JSON.stringify(gguf)} is not a .gguf file of the repo`, { repo: opts.repo });
  }
  const revision = opts.revision ?? 'main';
  const out = path.resolve(modelDir(opts.storageDir, opts.repo));
  const ckDir = checkpointDir(opts.storageDir, opts.repo);
  const base = { repo: opts.repo, revision, dir: out, checkpointDir: ckDir };
  const installed = listInstalledModels(opts.storageDir).find((m) => samePath(m.dir, out));
  if (installed) return { ...base, commit: installed.commit, checkpointBytes: folderBytes(ckDir), modelBytes: installed.sizeBytes, reused: true };
  // Only a leftover that is not a whole model gets here; refused before any download when it is the one loaded.
  if (opts.inUse?.(out) && fs.existsSync(out)) {
    throw new ConvertFailedError(`${out} is the model in use and would be replaced: select another model, then download ${opts.repo} again`, ckDir);
  }

  const dl = { ...hub, revision, destDir: ckDir };
  const fetched: { commit?: string; file?: string } = gguf ? await downloadGguf(dl, gguf, onProgress) : await downloadCheckpoint(dl, onProgress);
  const { commit, file: ggufFile } = fetched;

  const work = convertingDir(opts.storageDir, opts.repo);
  const tmpOut = path.join(work, 'model');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  let converted: ConvertResult;
  try {
    onProgress?.({ stage: 'convert' });
    // A GGUF is converted from its file (a repo may keep it in a folder); the repo's tokenizer.json, when fetched,
    // lies beside a file at the repo's top.
    const from = ggufFile ? path.join(ckDir, ...ggufFile.split('/')) : ckDir;
    converted = await convert({ from, out: tmpOut, quant, signal: opts.signal, onProgress: (p) => onProgress?.({ stage: 'convert', convert: p }) });
    if (opts.signal?.aborted) throw new Error('cancelled');
    finishFolder(tmpOut, ckDir);
    const manifest: ConvertedManifest = {
      repo: opts.repo,
      revision,
      commit,
      endpoint: resolveEndpoint(opts.endpoint, opts.env),
      downloadedAt: new Date().toISOString(),
      files: listFiles(tmpOut),
      converted: { from: ggufFile ? 'gguf' : 'safetensors', quant: converted.quant, modelType: converted.modelType, seconds: converted.seconds },
    };
    fs.writeFileSync(path.join(tmpOut, MANIFEST), JSON.stringify(manifest, null, 2));
    // Not an installed model (checked above): a leftover, replaced whole or (a file in it locked) not at all.
    fs.mkdirSync(path.dirname(out), { recursive: true });
    await moveFolderInto(tmpOut, out, { log: opts.log });
  } catch (e) {
    if (opts.signal?.aborted) {
      throw new HubError(
        'cancelled',
        `Conversion of ${opts.repo} cancelled. The checkpoint is kept: downloading the model again converts it without downloading.`,
        {
          repo: opts.repo,
          code: 'ConvertCancelled',
        },
      );
    }
    const msg = (e as Error)?.message ?? String(e);
    throw new ConvertFailedError(`Converting ${opts.repo} failed: ${msg}. The checkpoint is kept in ${ckDir}.`, ckDir, e);
  } finally {
    // rmSync retries Windows' EBUSY/EPERM itself; a scratch folder left behind is not listed and is removed next time.
    try {
      fs.rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch (e) {
      opts.log?.(`could not remove ${work}: ${(e as Error).message}`);
    }
  }
  return { ...base, commit, checkpointBytes: folderBytes(ckDir), modelBytes: folderBytes(out), reused: false, converted };
}

/**
 * Completes the converter's output with the checkpoint's config and tokenizer files it did not write itself,
 * and checks that it is a model folder (config.json, tokenizer.json, onnx/*.onnx).
 */
function finishFolder(dir: string, checkpoint: string): void {
  if (!fs.existsSync(dir)) throw new Error(`the converter wrote nothing to ${dir}`);
  for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) {
    const src = path.join(checkpoint, f);
    const dst = path.join(dir, f);
    if (!fs.existsSync(dst) && fs.existsSync(src)) fs.copyFileSync(src, dst);
  }
  const onnx = fs.existsSync(path.join(dir, 'onnx')) ? fs.readdirSync(path.join(dir, 'onnx')).filter((f) => f.endsWith('.onnx')) : [];
  const missing = [...['config.json', 'tokenizer.json'].filter((f) => !fs.existsSync(path.join(dir, f))), ...(onnx.length ? [] : ['onnx/*.onnx'])];
  if (missing.length) throw new Error(`the converted folder lacks ${missing.join(', ')}`);
}
