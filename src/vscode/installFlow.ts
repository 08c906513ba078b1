import * as vscode from 'vscode';
import type { DownloadProgress } from '../hub/downloader';
import { formatBytes, formatDuration } from '../hub/format';
import { HubError } from '../hub/hubErrors';
import { ConvertFailedError, type Converter } from '../hub/installCheckpoint';
import type { ModelFile } from '../hub/recommended';
import { downloadTransport } from './config';
import type { HubAccess } from './hubAccess';

/**
 * The steps "Ghostline: Download Model" shares between its two flows (an ONNX export: downloadModel.ts; a
 * checkpoint converted here: checkpointCommand.ts): where models are stored, a cancellable progress
 * notification whose failure is reported with the right actions, and the offer to use the new model.
 */

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
  /** A GGUF file of the repo to download and convert (a repo without an ONNX export). */
  gguf?: string;
  /** Checkpoints: delete (true) or keep (false) the checkpoint after converting, without asking. */
  deleteCheckpoint?: boolean;
}

export function storageDir(context: vscode.ExtensionContext): string {
  return context.globalStorageUri.fsPath;
}

/** The download's line in the progress notification: bytes, speed, ETA and the file. */
export function progressMessage(p: DownloadProgress): string {
  if (p.phase === 'metadata') return 'Checking files…';
  const done = formatBytes(p.bytes);
  const size = p.total !== undefined ? ` / ${formatBytes(p.total)}` : '';
  const speed = p.speed > 0 ? `, ${formatBytes(p.speed)}/s` : '';
  const eta = p.etaSeconds !== undefined && p.speed > 0 ? `, ${formatDuration(p.etaSeconds)} left` : '';
  const file = p.file ? ` · ${p.file} (${Math.min(p.fileIndex + 1, p.fileCount)}/${p.fileCount})` : '';
  return `${p.phase === 'verify' ? 'Verifying · ' : ''}${done}${size}${speed}${eta}${file}`;
}

/** What every hub transfer of the command takes: the repo, the endpoint and token, the proxy, where to store, Cancel. */
export interface Transfer extends HubAccess {
  repo: string;
  revision: string;
  transport: ReturnType<typeof downloadTransport>;
  storageDir: string;
  signal: AbortSignal;
  progressIntervalMs: number;
  log: (message: string) => void;
}

/**
 * Runs `work` in a cancellable progress notification (Cancel aborts the transfer's signal; percentages never
 * go back). A failure is told to the user with what they can do about it, and gives undefined.
 */
export async function withInstallProgress<T>(
  context: vscode.ExtensionContext,
  deps: ModelCommandDeps,
  title: string,
  target: { repo: string; revision: string },
  hub: HubAccess,
  work: (transfer: Transfer, report: (pct: number | undefined, message: string) => void) => Promise<T>,
): Promise<T | undefined> {
  const { repo, revision } = target;
  try {
    return await cancellableProgress(title, (signal, report) =>
      work(
        {
          repo,
          revision,
          ...hub,
          transport: downloadTransport(),
          storageDir: storageDir(context),
          signal,
          progressIntervalMs: 250,
          log: (m) => deps.log.warn(`download ${repo}: ${m}`),
        },
        report,
      ),
    );
  } catch (e) {
    await reportError(deps, repo, revision, hub.endpoint, e);
    return undefined;
  }
}

/** Asks "Use it for completions?" (unless the request already says) and switches to the model on yes. */
export async function offerModel(deps: ModelCommandDeps, dir: string, question: string, use: boolean | undefined): Promise<void> {
  if (use === undefined) use = (await vscode.window.showInformationMessage(question, 'Use Model', 'Not Now')) === 'Use Model';
  if (use) await switchToModel(dir, deps);
}

/**
 * Asks "Use it for next edits?" (unless the request already says) and on yes points `ghostline.nextEdit.modelPath`
 * (user settings) at the folder and turns next edits on: the user chose a model made for them.
 */
export async function offerNextEditModel(dir: string, question: string, use: boolean | undefined): Promise<void> {
  if (use === undefined) use = (await vscode.window.showInformationMessage(question, 'Use for Next Edits', 'Not Now')) === 'Use for Next Edits';
  if (!use) return;
  const cfg = vscode.workspace.getConfiguration('ghostline.nextEdit');
  await cfg.update('modelPath', dir, vscode.ConfigurationTarget.Global);
  await cfg.update('enable', true, vscode.ConfigurationTarget.Global);
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
