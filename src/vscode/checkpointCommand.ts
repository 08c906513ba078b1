import * as path from 'node:path';
import * as vscode from 'vscode';
import { removeCheckpoint } from '../hub/checkpointStore';
import { childProcessConverter } from '../hub/childProcessConverter';
import { formatBytes, formatDuration } from '../hub/format';
import { installCheckpoint, type InstallProgress } from '../hub/installCheckpoint';
import { hubAccess } from './hubAccess';
import { findRecommended } from '../hub/recommended';
import { type DownloadRequest, type ModelCommandDeps, offerModel, offerNextEditModel, progressMessage, storageDir, withInstallProgress } from './installFlow';

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
export async function checkpointCommand(
  context: vscode.ExtensionContext,
  deps: ModelCommandDeps,
  req: DownloadRequest & { revision: string },
): Promise<string | undefined> {
  const { repo, revision } = req;
  const recommended = findRecommended(repo);
  const hub = await hubAccess(context);
  if (!hub) return undefined;
  const { endpoint, token } = hub;
  const started = Date.now();
  deps.log.info(`download checkpoint ${repo}@${revision} from ${endpoint}${token ? ' (with token)' : ''}, then convert`);
  const res = await withInstallProgress(context, deps, `Ghostline: ${repo}`, { repo, revision }, hub, (transfer, report) =>
    installCheckpoint({
      ...transfer,
      gguf: req.gguf ?? recommended?.gguf,
      // A child process: the conversion must not block the extension host (progress, Cancel).
      convert: deps.convert ?? childProcessConverter(path.join(context.extensionPath, 'dist', 'cli.js')),
      inUse: deps.modelInUse,
      onProgress: (p) => report(checkpointPercent(p), checkpointMessage(p)),
    }),
  );
  if (!res) return undefined;
  const secs = (Date.now() - started) / 1000;
  deps.log.info(
    res.reused
      ? `${repo} is already converted in ${res.dir}`
      : `converted ${repo}@${revision} (${res.commit ?? 'commit unknown'}) to ${res.dir}: ${formatBytes(res.modelBytes)} in ${formatDuration(secs)}; checkpoint ${formatBytes(res.checkpointBytes)} in ${res.checkpointDir}`,
  );
  const what = res.reused ? 'is already converted' : 'is converted and ready';
  if (recommended?.purpose === 'next-edit') {
    await offerNextEditModel(res.dir, `Ghostline: ${repo} ${what} (${formatBytes(res.modelBytes)}). Use it for next edits?`, req.use);
  } else {
    await offerModel(deps, res.dir, `Ghostline: ${repo} ${what} (${formatBytes(res.modelBytes)}). Use it for completions?`, req.use);
  }
  if (!res.reused && res.checkpointBytes > 0) await offerToDeleteCheckpoint(context, deps, repo, res.checkpointDir, res.checkpointBytes, req.deleteCheckpoint);
  return res.dir;
}

/** The converted model no longer needs its checkpoint: delete it on yes (or as the request says). */
async function offerToDeleteCheckpoint(
  context: vscode.ExtensionContext,
  deps: ModelCommandDeps,
  repo: string,
  dir: string,
  bytes: number,
  decided: boolean | undefined,
): Promise<void> {
  let del = decided;
  if (del === undefined) {
    const label = `Delete checkpoint (${formatBytes(bytes)})`;
    const choice = await vscode.window.showInformationMessage(
      `Ghostline: the model no longer needs the downloaded checkpoint of ${repo}. Keep it only to convert it again later.`,
      label,
      'Keep',
    );
    del = choice === label;
  }
  if (!del) return;
  try {
    await removeCheckpoint(storageDir(context), dir, (m) => deps.log.warn(m));
    deps.log.info(`deleted checkpoint ${dir}`);
  } catch (e) {
    // Windows: a file in it still open (folderSwap.ts); the folder is left whole.
    void vscode.window.showWarningMessage(`Ghostline: ${(e as Error).message}`);
  }
}
