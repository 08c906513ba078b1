import * as vscode from 'vscode';
import { listCheckpoints } from '../hub/checkpointStore';
import { downloadModel } from '../hub/downloader';
import { formatBytes, formatDuration } from '../hub/format';
import { listRepoFiles } from '../hub/hubClient';
import { HubError } from '../hub/hubErrors';
import { type InstalledModel, listInstalledModels, listPartialDownloads } from '../hub/installedModels';
import { findRecommended, hasCpuOnlyProducts, type ModelFile, pickGgufFile, pickModelFiles, RECOMMENDED_MODELS } from '../hub/recommended';
import { parseRepoRef, repoIdProblem } from '../hub/repoRef';
import { checkpointCommand } from './checkpointCommand';
import { downloadTransport } from './config';
import { hubAccess, setHubToken } from './hubAccess';
import { type DownloadRequest, type ModelCommandDeps, offerModel, progressMessage, storageDir, withInstallProgress } from './installFlow';

/**
 * "Ghostline: Download Model": a QuickPick of recommended models (or any repo id), a cancellable progress
 * notification with bytes, speed and ETA, then an offer to switch `ghostline.modelPath` (user settings) to the
 * new folder. Models go to `<globalStorage>/models/`. Checkpoints (base models in safetensors) take
 * checkpointCommand.ts; the steps both flows share are installFlow.ts; the token command is hubAccess.ts.
 */

export type { DownloadRequest, ModelCommandDeps } from './installFlow';

type ModelPick = vscode.QuickPickItem & { repo?: string; custom?: boolean };

/** Said of an int8 export where it is picked, not only in Show Stats once it runs. */
const CPU_ONLY_PRODUCTS = 'On a GPU its int8 products still run on the CPU; the converted checkpoints run there.';

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

async function pickModel(context: vscode.ExtensionContext): Promise<{ repo: string; revision: string } | undefined> {
  const installed = new Set(listInstalledModels(storageDir(context)).map((m) => m.repo.toLowerCase()));
  const partial = new Set(listPartialDownloads(storageDir(context)).map((m) => m.repo.toLowerCase()));
  const checkpoints = new Map(listCheckpoints(storageDir(context)).map((c) => [c.repo.toLowerCase(), c]));
  const items: ModelPick[] = [];
  let section: string | undefined;
  for (const m of RECOMMENDED_MODELS) {
    const heading =
      m.purpose === 'next-edit'
        ? 'Next-edit models (ghostline.nextEdit): GGUF files converted on this machine'
        : m.kind === 'checkpoint'
          ? 'Base models: downloaded as checkpoints, converted on this machine'
          : 'Ready ONNX exports';
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
      detail: `${m.description}${m.fim ? '' : ' No trained FIM.'}${hasCpuOnlyProducts(m) ? ` ${CPU_ONLY_PRODUCTS}` : ''}${m.verified === 'unverified' ? ' (file names not verified)' : ''}`,
      repo: m.repo,
    });
  }
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({
    label: '$(edit) Enter a Hugging Face repo id…',
    description: 'owner/name or owner/name@revision, with an ONNX export or GGUF files',
    custom: true,
  });
  const pick = await vscode.window.showQuickPick(items, { title: 'Ghostline: Download Model', matchOnDescription: true, matchOnDetail: true });
  if (!pick) return undefined;
  if (pick.repo) return { repo: pick.repo, revision: findRecommended(pick.repo)!.revision };
  const typed = await vscode.window.showInputBox({
    title: 'Ghostline: Download Model from Hugging Face',
    prompt: 'Repo id of a model with an ONNX export (onnx/model*.onnx) or GGUF files (converted here), e.g. onnx-community/Qwen2.5-Coder-0.5B-Instruct',
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

/**
 * Which files to fetch: the curated list, or the repo's listing through the hub API. A repo without an ONNX
 * export but with GGUF files gives the GGUF file to convert instead (pickGgufFile).
 */
async function filesFor(
  repo: string,
  revision: string,
  endpoint: string,
  token: string | undefined,
  signal: AbortSignal,
): Promise<{ files: ModelFile[] } | { gguf: string }> {
  const rec = findRecommended(repo);
  if (rec && rec.revision === revision) return { files: rec.files };
  const listing = (await listRepoFiles(endpoint, repo, revision, { token, signal, transport: downloadTransport() })).files.map((f) => f.rfilename);
  const { files, onnx, missing } = pickModelFiles(listing);
  if (onnx && !missing.length) return { files };
  const gguf = pickGgufFile(listing);
  if (gguf) return { gguf };
  throw new HubError(
    'not_found',
    `${repo} has no ${missing.join(' and ')} at ${revision}: Ghostline needs an ONNX export (config.json, tokenizer.json, onnx/model*.onnx) or a GGUF file of a qwen2, llama or starcoder2 model (Q8_0, F16, BF16, K-quants). Try an onnx-community/… repo.`,
    { repo },
  );
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
  const hub = await hubAccess(context);
  if (!hub) return undefined;
  const { endpoint, token } = hub;
  const started = Date.now();
  deps.log.info(`download ${repo}@${revision} from ${endpoint}${token ? ' (with token)' : ''}`);
  const files = req.files;
  const result = await withInstallProgress(context, deps, `Ghostline: downloading ${repo}`, { repo, revision }, hub, async (transfer, report) => {
    const chosen = files ? { files } : await filesFor(repo, revision, endpoint, token, transfer.signal);
    if ('gguf' in chosen) return chosen; // converted like a checkpoint, below
    return downloadModel({
      ...transfer,
      files: chosen.files,
      onProgress: (p) => report(p.total ? Math.min(100, (100 * p.bytes) / p.total) : undefined, progressMessage(p)),
    });
  });
  if (!result) return undefined;
  if ('gguf' in result) {
    deps.log.info(`${repo} has no ONNX export: converting its ${result.gguf}`);
    return checkpointCommand(context, deps, { ...req, revision, gguf: result.gguf });
  }
  const secs = (Date.now() - started) / 1000;
  deps.log.info(
    `downloaded ${repo}@${revision} (${result.commit ?? 'commit unknown'}) to ${result.dir}: ${formatBytes(result.bytes)} in ${formatDuration(secs)}`,
  );
  await offerModel(deps, result.dir, `Ghostline: ${repo} is ready (${formatBytes(result.bytes)}). Use it for completions?`, req.use);
  return result.dir;
}
