import * as path from 'node:path';
import * as vscode from 'vscode';
import { downloadModel, type DownloadProgress, type DownloadResult } from '../hub/downloader';
import { listCheckpoints, removeCheckpoint } from '../hub/checkpointStore';
import { childProcessConverter } from '../hub/childProcessConverter';
import { formatBytes, formatDuration } from '../hub/format';
import { HubError, listRepoFiles, parseRepoRef, repoIdProblem, resolveEndpoint } from '../hub/hubClient';
import { listInstalledModels, listPartialDownloads, type InstalledModel } from '../hub/installedModels';
import { ConvertFailedError, installCheckpoint, type Converter, type InstallCheckpointResult, type InstallProgress } from '../hub/installCheckpoint';
import { findRecommended, pickModelFiles, RECOMMENDED_MODELS, type ModelFile } from '../hub/recommended';
import { proxySettings } from './config';

/**
 * "Ghostline: Download Model" and "Ghostline: Set Hugging Face Token": a QuickPick of recommended models
 * (or any repo id), a cancellable progress notification with bytes, speed and ETA, then an offer to switch
 * `ghostline.modelPath` (user settings) to the new folder. Models go to `<globalStorage>/models/`.
 * Checkpoints (base models in safetensors) are downloaded to `<globalStorage>/checkpoints/` and converted on
 * this machine by src/hub/installCheckpoint.ts, in the same notification; then an offer to delete them.
 */

export const TOKEN_SECRET = 'ghostline.hubToken';

export interface ModelCommandDeps {
  log: vscode.LogOutputChannel;
  /** Called after `ghostline.modelPath` was switched to a downloaded model (the config listener reloads anyway). */
  onModelSwitched?: (dir: string) => void;
  /** The checkpoint converter (tests); default `dist/cli.js convert` in a child process. */
  convert?: Converter;
  /** Whether the engine has this model folder loaded: a conversion never replaces it (installCheckpoint.ts). */
  modelInUse?: (dir: string) => boolean;
}

export interface DownloadRequest {
  repo: string;
  revision?: string;
  files?: ModelFile[];
  /** Switch to the model without asking (scripts, tests). */
  use?: boolean;
  /** Checkpoints: delete (true) or keep (false) the checkpoint after converting, without asking. */
  deleteCheckpoint?: boolean;
}

type ModelPick = vscode.QuickPickItem & { repo?: string; custom?: boolean };

function storageDir(context: vscode.ExtensionContext): string {
  return context.globalStorageUri.fsPath;
}

/** The endpoint: the `ghostline.hub.endpoint` setting when the user set it, else HF_ENDPOINT, else huggingface.co. */
export function hubEndpoint(): string {
  // Machine-scoped setting: only the user's own value counts (a workspace must not redirect downloads or the token).
  const explicit = vscode.workspace.getConfiguration('ghostline').inspect<string>('hub.endpoint')?.globalValue;
  return resolveEndpoint(explicit || undefined);
}

/** The token: SecretStorage first (set by the command), then HF_TOKEN / HUGGING_FACE_HUB_TOKEN. */
async function hubToken(context: vscode.ExtensionContext): Promise<string | undefined> {
  const stored = await context.secrets.get(TOKEN_SECRET);
  return stored || process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined;
}

/** Installed models with sizes, for the Select Model quick pick. */
export function installedModelItems(context: vscode.ExtensionContext): (vscode.QuickPickItem & { dir: string; model: InstalledModel })[] {
  return listInstalledModels(storageDir(context)).map((m) => ({
    label: `$(cloud-download) ${m.repo}`,
    description: `${m.converted ? 'converted here' : 'downloaded'}, ${formatBytes(m.sizeBytes)}`,
    detail: m.onnxFiles.join(', '),
    dir: m.dir,
    model: m,
  }));
}

export function registerModelCommands(context: vscode.ExtensionContext, deps: ModelCommandDeps): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('ghostline.downloadModel', (arg?: string | DownloadRequest) => downloadModelCommand(context, deps, arg)),
    vscode.commands.registerCommand('ghostline.setHubToken', () => setHubToken(context)),
  );
}

async function setHubToken(context: vscode.ExtensionContext): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: 'Ghostline: Hugging Face Token',
    prompt: 'A read token from huggingface.co/settings/tokens, for gated or private models. Empty: forget the stored token.',
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'hf_…',
    validateInput: (v) => (v && /\s/.test(v.trim()) ? 'A token has no spaces' : undefined),
  });
  if (value === undefined) return;
  if (value.trim()) {
    await context.secrets.store(TOKEN_SECRET, value.trim());
    void vscode.window.showInformationMessage('Ghostline: Hugging Face token stored in the OS keychain (VS Code secret storage).');
  } else {
    await context.secrets.delete(TOKEN_SECRET);
    void vscode.window.showInformationMessage(
      process.env.HF_TOKEN ? 'Ghostline: stored token removed; HF_TOKEN from the environment is still used.' : 'Ghostline: stored Hugging Face token removed.',
    );
  }
}

async function pickModel(context: vscode.ExtensionContext): Promise<{ repo: string; revision: string } | undefined> {
  const installed = new Set(listInstalledModels(storageDir(context)).map((m) => m.repo.toLowerCase()));
  const partial = new Set(listPartialDownloads(storageDir(context)).map((m) => m.repo.toLowerCase()));
  const checkpoints = new Map(listCheckpoints(storageDir(context)).map((c) => [c.repo.toLowerCase(), c]));
  const items: ModelPick[] = [];
  let section: string | undefined;
  for (const m of RECOMMENDED_MODELS) {
    const heading = m.kind === 'checkpoint' ? 'Base models: downloaded as checkpoints, converted on this machine' : 'Ready ONNX exports';
    if (heading !== section) {
      section = heading;
      items.push({ label: heading, kind: vscode.QuickPickItemKind.Separator });
    }
    const ck = checkpoints.get(m.repo.toLowerCase());
    const state = installed.has(m.repo.toLowerCase())
      ? ' · installed'
      : ck
        ? ck.complete
          ? ' · checkpoint downloaded (converts without downloading)'
          : ' · partly downloaded (resumes)'
        : partial.has(m.repo.toLowerCase())
          ? ' · partly downloaded (resumes)'
          : '';
    items.push({
      label: `${installed.has(m.repo.toLowerCase()) ? '$(check)' : '$(cloud-download)'} ${m.label}`,
      description: `${m.repo} · ~${formatBytes(m.approxBytes)} · ${m.license}${state}`,
      detail: `${m.description}${m.fim ? '' : ' No trained FIM.'}${m.verified === 'unverified' ? ' (file names not verified)' : ''}`,
      repo: m.repo,
    });
  }
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: '$(edit) Enter a Hugging Face repo id…', description: 'owner/name or owner/name@revision, with an ONNX export', custom: true });
  const pick = await vscode.window.showQuickPick(items, { title: 'Ghostline: Download Model', matchOnDescription: true, matchOnDetail: true });
  if (!pick) return undefined;
  if (pick.repo) return { repo: pick.repo, revision: findRecommended(pick.repo)!.revision };
  const typed = await vscode.window.showInputBox({
    title: 'Ghostline: Download Model from Hugging Face',
    prompt: 'Repo id of a model with an ONNX export (onnx/model*.onnx), e.g. onnx-community/Qwen2.5-Coder-0.5B-Instruct',
    placeHolder: 'owner/name',
    ignoreFocusOut: true,
    validateInput: (v) => {
      try {
        parseRepoRef(v);
        return undefined;
      } catch {
        return repoIdProblem(v.split('@')[0].trim()) ?? 'Invalid revision after "@"';
      }
    },
  });
  if (!typed) return undefined;
  return parseRepoRef(typed);
}

/** Which files to fetch: the curated list, or the repo's listing through the hub API. */
async function filesFor(repo: string, revision: string, endpoint: string, token: string | undefined, signal: AbortSignal): Promise<ModelFile[]> {
  const rec = findRecommended(repo);
  if (rec && rec.revision === revision) return rec.files;
  const listing = await listRepoFiles(endpoint, repo, revision, { token, signal, transport: proxySettings() });
  const { files, onnx, missing } = pickModelFiles(listing.files.map((f) => f.rfilename));
  if (!onnx || missing.length) {
    throw new HubError(
      'not_found',
      `${repo} has no ${missing.join(' and ')} at ${revision}: Ghostline needs an ONNX export (config.json, tokenizer.json, onnx/model*.onnx). Try an onnx-community/… repo.`,
      { repo },
    );
  }
  return files;
}

function progressMessage(p: DownloadProgress): string {
  if (p.phase === 'metadata') return 'Checking files…';
  const done = formatBytes(p.bytes);
  const size = p.total !== undefined ? ` / ${formatBytes(p.total)}` : '';
  const speed = p.speed > 0 ? `, ${formatBytes(p.speed)}/s` : '';
  const eta = p.etaSeconds !== undefined && p.speed > 0 ? `, ${formatDuration(p.etaSeconds)} left` : '';
  const file = p.file ? ` · ${p.file} (${Math.min(p.fileIndex + 1, p.fileCount)}/${p.fileCount})` : '';
  return `${p.phase === 'verify' ? 'Verifying · ' : ''}${done}${size}${speed}${eta}${file}`;
}

/** The command. Resolves with the model folder, or undefined when cancelled or failed (after telling the user). */
export async function downloadModelCommand(
  context: vscode.ExtensionContext,
  deps: ModelCommandDeps,
  arg?: string | DownloadRequest,
): Promise<string | undefined> {
  let req: DownloadRequest | undefined;
  try {
    req = typeof arg === 'string' ? parseRepoRef(arg) : arg;
  } catch (e) {
    void vscode.window.showErrorMessage(`Ghostline: ${(e as Error).message}`);
    return undefined;
  }
  if (!req) {
    const picked = await pickModel(context);
    if (!picked) return undefined;
    req = picked;
  }
  const { repo } = req;
  const revision = req.revision ?? findRecommended(repo)?.revision ?? 'main';
  if (findRecommended(repo)?.kind === 'checkpoint' && !req.files) return checkpointCommand(context, deps, { ...req, revision });
  let endpoint: string;
  try {
    endpoint = hubEndpoint();
  } catch (e) {
    void vscode.window.showErrorMessage(`Ghostline: ${(e as Error).message} (setting ghostline.hub.endpoint or HF_ENDPOINT)`);
    return undefined;
  }
  const token = await hubToken(context);
  const started = Date.now();
  deps.log.info(`download ${repo}@${revision} from ${endpoint}${token ? ' (with token)' : ''}`);
  let result: DownloadResult;
  try {
    result = await cancellableProgress(`Ghostline: downloading ${repo}`, async (signal, report) => {
      const files = req!.files ?? (await filesFor(repo, revision, endpoint, token, signal));
      return await downloadModel({
        repo,
        revision,
        files,
        endpoint,
        token,
        transport: proxySettings(),
        storageDir: storageDir(context),
        signal,
        progressIntervalMs: 250,
        log: (m) => deps.log.warn(`download ${repo}: ${m}`),
        onProgress: (p) => report(p.total ? Math.min(100, (100 * p.bytes) / p.total) : undefined, progressMessage(p)),
      });
    });
  } catch (e) {
    await reportError(deps, repo, revision, endpoint, e);
    return undefined;
  }
  const secs = (Date.now() - started) / 1000;
  deps.log.info(
    `downloaded ${repo}@${revision} (${result.commit ?? 'commit unknown'}) to ${result.dir}: ${formatBytes(result.bytes)} in ${formatDuration(secs)}`,
  );
  let use = req.use;
  if (use === undefined) {
    const choice = await vscode.window.showInformationMessage(
      `Ghostline: ${repo} is ready (${formatBytes(result.bytes)}). Use it for completions?`,
      'Use Model',
      'Not Now',
    );
    use = choice === 'Use Model';
  }
  if (use) await switchToModel(result.dir, deps);
  return result.dir;
}

/** Points `ghostline.modelPath` (user settings) at a folder; clears a user-level `modelFile` that belongs to the old model. */
async function switchToModel(dir: string, deps: ModelCommandDeps): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('ghostline');
  if (cfg.inspect<string>('modelFile')?.globalValue) await cfg.update('modelFile', undefined, vscode.ConfigurationTarget.Global);
  await cfg.update('modelPath', dir, vscode.ConfigurationTarget.Global);
  const ws = cfg.inspect<string>('modelPath');
  if (ws?.workspaceValue || ws?.workspaceFolderValue) {
    void vscode.window.showWarningMessage('Ghostline: this workspace sets ghostline.modelPath, which overrides the model you just chose.');
  }
  deps.onModelSwitched?.(dir);
}

async function reportError(deps: ModelCommandDeps, repo: string, revision: string, endpoint: string, e: unknown): Promise<void> {
  if (e instanceof ConvertFailedError) {
    deps.log.error(`${e.message}\n${(e.cause as Error)?.stack ?? e.cause}`);
    void vscode.window.showErrorMessage(`Ghostline: ${e.message}`);
    return;
  }
  if (!(e instanceof HubError)) {
    deps.log.error(`download ${repo} failed: ${(e as Error)?.stack ?? e}`);
    void vscode.window.showErrorMessage(`Ghostline: downloading ${repo} failed: ${(e as Error)?.message ?? e}`);
    return;
  }
  deps.log.warn(`download ${repo}: ${e.kind}: ${e.message}`);
  const page = `${endpoint}/${repo}`;
  switch (e.kind) {
    case 'cancelled':
      void vscode.window.showInformationMessage(
        e.details.code === 'ConvertCancelled'
          ? `Ghostline: ${e.message}`
          : `Ghostline: download of ${repo} cancelled. Downloading it again resumes where it stopped.`,
      );
      return;
    case 'unauthorized':
    case 'forbidden': {
      const choice = await vscode.window.showErrorMessage(`Ghostline: ${e.message}`, 'Set Token', 'Open Model Page');
      if (choice === 'Set Token') await vscode.commands.executeCommand('ghostline.setHubToken');
      else if (choice === 'Open Model Page') await vscode.env.openExternal(vscode.Uri.parse(page));
      return;
    }
    case 'offline':
    case 'http': {
      const choice = await vscode.window.showErrorMessage(`Ghostline: ${e.message}`, 'Retry');
      if (choice === 'Retry') await vscode.commands.executeCommand('ghostline.downloadModel', { repo, revision } satisfies DownloadRequest);
      return;
    }
    default:
      void vscode.window.showErrorMessage(`Ghostline: ${e.message}`);
  }
}

function checkpointMessage(p: InstallProgress): string {
  if (p.stage === 'resolve') return "Reading the checkpoint's file list…";
  if (p.stage === 'download') return `Downloading · ${progressMessage(p.download)}`;
  if (!p.convert) return 'Converting…';
  const pct = p.convert.totalBytes > 0 ? `${Math.floor((100 * p.convert.doneBytes) / p.convert.totalBytes)}%` : '';
  return `Converting · ${pct}${p.convert.tensor ? ` · ${p.convert.tensor}` : ''}`;
}

/** Overall percent: the download counts for 0-80, the conversion for 80-100. */
function checkpointPercent(p: InstallProgress): number | undefined {
  if (p.stage === 'download') return p.download.total ? (80 * p.download.bytes) / p.download.total : undefined;
  if (p.stage === 'convert') return p.convert && p.convert.totalBytes > 0 ? 80 + (20 * p.convert.doneBytes) / p.convert.totalBytes : 80;
  return undefined;
}

/** A checkpoint: download, convert, offer to use the model, then to delete the checkpoint. */
async function checkpointCommand(
  context: vscode.ExtensionContext,
  deps: ModelCommandDeps,
  req: DownloadRequest & { revision: string },
): Promise<string | undefined> {
  const { repo, revision } = req;
  let endpoint: string;
  try {
    endpoint = hubEndpoint();
  } catch (e) {
    void vscode.window.showErrorMessage(`Ghostline: ${(e as Error).message} (setting ghostline.hub.endpoint or HF_ENDPOINT)`);
    return undefined;
  }
  const token = await hubToken(context);
  const started = Date.now();
  deps.log.info(`download checkpoint ${repo}@${revision} from ${endpoint}${token ? ' (with token)' : ''}, then convert`);
  let res: InstallCheckpointResult;
  try {
    res = await cancellableProgress(`Ghostline: ${repo}`, async (signal, report) => {
      return await installCheckpoint({
        repo,
        revision,
        endpoint,
        token,
        transport: proxySettings(),
        storageDir: storageDir(context),
        signal,
        progressIntervalMs: 250,
        log: (m) => deps.log.warn(`download ${repo}: ${m}`),
        // A child process: the conversion must not block the extension host (progress, Cancel).
        convert: deps.convert ?? childProcessConverter(path.join(context.extensionPath, 'dist', 'cli.js')),
        inUse: deps.modelInUse,
        onProgress: (p) => report(checkpointPercent(p), checkpointMessage(p)),
      });
    });
  } catch (e) {
    await reportError(deps, repo, revision, endpoint, e);
    return undefined;
  }
  const secs = (Date.now() - started) / 1000;
  deps.log.info(
    res.reused
      ? `${repo} is already converted in ${res.dir}`
      : `converted ${repo}@${revision} (${res.commit ?? 'commit unknown'}) to ${res.dir}: ${formatBytes(res.modelBytes)} in ${formatDuration(secs)}; checkpoint ${formatBytes(res.checkpointBytes)} in ${res.checkpointDir}`,
  );
  let use = req.use;
  if (use === undefined) {
    const what = res.reused ? 'is already converted' : 'is converted and ready';
    const choice = await vscode.window.showInformationMessage(
      `Ghostline: ${repo} ${what} (${formatBytes(res.modelBytes)}). Use it for completions?`,
      'Use Model',
      'Not Now',
    );
    use = choice === 'Use Model';
  }
  if (use) await switchToModel(res.dir, deps);
  if (!res.reused && res.checkpointBytes > 0) {
    let del = req.deleteCheckpoint;
    if (del === undefined) {
      const label = `Delete checkpoint (${formatBytes(res.checkpointBytes)})`;
      const choice = await vscode.window.showInformationMessage(
        `Ghostline: the model no longer needs the downloaded checkpoint of ${repo}. Keep it only to convert it again later.`,
        label,
        'Keep',
      );
      del = choice === label;
    }
    if (del) {
      try {
        await removeCheckpoint(storageDir(context), res.checkpointDir, (m) => deps.log.warn(m));
        deps.log.info(`deleted checkpoint ${res.checkpointDir}`);
      } catch (e) {
        // Windows: a file in it still open (folderSwap.ts); the folder is left whole.
        void vscode.window.showWarningMessage(`Ghostline: ${(e as Error).message}`);
      }
    }
  }
  return res.dir;
}

/** A cancellable progress notification: Cancel aborts `signal`; `report` takes percentages that never go back. */
async function cancellableProgress<T>(
  title: string,
  work: (signal: AbortSignal, report: (pct: number | undefined, message: string) => void) => Promise<T>,
): Promise<T> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, cancelToken) => {
    const ac = new AbortController();
    const sub = cancelToken.onCancellationRequested(() => ac.abort());
    try {
      return await work(ac.signal, percentReporter(progress));
    } finally {
      sub.dispose();
    }
  });
}

/** Reports a percentage to a progress notification as increments (VS Code adds them up), never going back. */
function percentReporter(progress: vscode.Progress<{ message?: string; increment?: number }>): (pct: number | undefined, message: string) => void {
  let reported = 0;
  return (pct, message) => {
    const increment = pct !== undefined && pct > reported ? pct - reported : undefined;
    if (pct !== undefined) reported = Math.max(reported, pct);
    progress.report({ message, increment });
  };
}
