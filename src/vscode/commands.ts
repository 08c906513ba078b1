import { folderBytes } from '../hub/checkpointStore';
import { formatBytes } from '../hub/format';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SessionStats } from '../completion/sessionStats';
import type { EngineClient } from '../engine/host/client';
import { defaultModelDir } from '../engine/host/defaultModel';
import { describeDevice, describeGpuCache } from '../engine/shared/device';
import type { Config } from './config';
import { installedModelItems } from './downloadModel';
import { generateFromSelection, type GenerateArgs } from './generateFromSelection';
import { ReviewDocuments } from './reviewDocuments';
import type { BackendRouter } from './backendRouter';
import type { ModelLoader } from './modelLoader';
import { type CalibrateArgs, calibrateWorkspace } from './calibrateCommand';
import { setServerKey } from './serverKey';
import { showPrompt } from './showPrompt';
import type { GatherStats } from '../completion/context/repo/repoContext';
import type { StatusBar } from './statusBar';
import type { NextEditController } from './nextEdit/nextEditController';
import type { NextEditEngine } from './nextEdit/nextEditEngine';
import type { CompletionShared } from './completionShared';

export interface CommandDeps {
  client: EngineClient;
  config: Config;
  status: StatusBar;
  stats: SessionStats;
  loader: ModelLoader;
  shared: CompletionShared;
  router: BackendRouter;
  log: vscode.LogOutputChannel;
  context: vscode.ExtensionContext;
  enabled: { value: boolean };
  nextEdit: NextEditController;
  nextEditEngine: NextEditEngine;
}

export function registerCommands(d: CommandDeps): vscode.Disposable {
  const reg = vscode.commands.registerCommand;
  const review = new ReviewDocuments();
  return vscode.Disposable.from(
    review,
    reg('ghostline.generateFromSelection', (args?: GenerateArgs) =>
      generateFromSelection(
        {
          generator: () => d.router.generator(),
          service: () => d.router.service() ?? d.loader.service,
          notReadyReason: () => d.router.notReadyReason(),
          config: d.config,
          status: d.status,
          log: d.log,
          review,
        },
        args,
      ),
    ),
    reg('ghostline.calibrateWorkspace', (args?: CalibrateArgs) =>
      calibrateWorkspace(
        {
          active: () => {
            const service = d.router.service();
            if (!service) return null;
            const name = d.router.serverName(service) ?? d.loader.info?.name;
            return name ? { service, name } : null;
          },
          calibrations: d.shared.calibrations,
          status: d.status,
          log: d.log,
        },
        args,
      ),
    ),
    reg('ghostline.setServerKey', (args?: { key?: string }) => setServerKey(d.context.secrets, d.config.server().url, args)),
    reg('ghostline.toggle', async () => {
      d.enabled.value = !d.enabled.value;
      await d.context.globalState.update('ghostline.enabled', d.enabled.value);
      if (d.enabled.value) {
        d.status.set(d.loader.info ? 'idle' : 'error');
        void d.router.connect();
      } else {
        d.router.service()?.cancelAll();
        d.loader.service?.cancelAll();
        d.status.set('disabled');
      }
      void vscode.window.setStatusBarMessage(`Ghostline inline completions ${d.enabled.value ? 'on' : 'off'}`, 2000);
      return d.enabled.value;
    }),
    reg('ghostline.selectModel', () => selectModel(d)),
    reg('ghostline.showLog', () => d.log.show()),
    reg('ghostline.showPrompt', () =>
      showPrompt({
        service: () => d.router.service(),
        describe: (service) => ({
          model: d.router.serverName(service) ?? d.loader.info?.name ?? 'no model',
          format: service.templateFamily() ?? 'plain (no fill-in-the-middle)',
        }),
        repo: d.shared.repo,
        notReadyReason: () => d.router.notReadyReason(),
      }),
    ),
    reg('ghostline.showStats', async () => {
      const info = d.loader.info;
      const worker = info ? await d.client.workerStats().catch(() => null) : null;
      const huge = worker?.hugePageBytes ? ` (${Math.round(worker.hugePageBytes / 1e6)} MB on huge pages)` : '';
      const memory = worker
        ? `, worker ${Math.round(worker.rssBytes / 1e6)} MB${huge}, ${worker.cachedTokens} tokens cached${worker.gpuCache ? `, ${describeGpuCache(worker.gpuCache)}` : ''}`
        : '';
      const moves = info?.canMoveCachedRuns ? `, cached runs moved ${info.moveCachedRunsOverMs < 0 ? 'never' : `over ${info.moveCachedRunsOverMs} ms`}` : '';
      const local = info
        ? `Model ${info.name} (${path.basename(info.onnxFile)}) on the ${describeDevice(info.device)}, ${info.threads} threads${moves}${memory}`
        : 'No local model loaded';
      const head = `${d.stats.backend === 'local' ? local : `Backend ${d.stats.backend}; ${local}`}; ${contextLine(d.shared.repo.stats())}${await nextEditLine(d)}`;
      d.log.info(`stats\n${head}\n${d.stats.summary()}`);
      void vscode.window.showInformationMessage(`Ghostline: ${head}. ${d.stats.summary().replace(/\n/g, '; ')}`);
      return d.stats.summary();
    }),
    reg('ghostline.accepted', (chars: number) => {
      d.stats.accepted++;
      d.log.debug(`accepted ${chars} characters`);
    }),
    reg('ghostline.restartEngine', async () => {
      await d.client.dispose();
      return d.loader.load();
    }),
    reg('ghostline.measureDevicesAgain', async () => {
      // Every model's verdict goes: a new driver or GPU changes them all. Each model is measured on its next load.
      fs.rmSync(d.shared.deviceVerdictFile, { force: true });
      d.loader.forgetGpuFailure();
      const { device } = d.config.engineOptions();
      d.log.info(`device verdicts forgotten (${d.shared.deviceVerdictFile})`);
      if (device !== 'auto') {
        void vscode.window.showInformationMessage(
          `Ghostline: ghostline.engine.device is ${device}, so nothing is measured; set it to auto to choose by measurement.`,
        );
      }
      return d.router.wantsLocal() ? d.loader.load() : false;
    }),
    reg('ghostline.showMenu', async () => {
      const items: (vscode.QuickPickItem & { command: string })[] = [
        { label: d.enabled.value ? '$(circle-slash) Disable inline completions' : '$(check) Enable inline completions', command: 'ghostline.toggle' },
        { label: '$(sparkle) Generate from Selection', command: 'ghostline.generateFromSelection' },
        { label: '$(database) Select Model', description: d.loader.info?.name, command: 'ghostline.selectModel' },
        { label: '$(key) Set Server Key', description: d.config.server().url || 'for a team server', command: 'ghostline.setServerKey' },
        { label: '$(cloud-download) Download Model', command: 'ghostline.downloadModel' },
        { label: '$(graph) Show Stats', command: 'ghostline.showStats' },
        { label: '$(output) Show Log', command: 'ghostline.showLog' },
        { label: '$(debug-restart) Restart Engine', command: 'ghostline.restartEngine' },
        { label: '$(gear) Settings', command: 'workbench.action.openSettings' },
      ];
      const pick = await vscode.window.showQuickPick(items, { title: 'Ghostline' });
      if (!pick) return;
      if (pick.command === 'workbench.action.openSettings') await vscode.commands.executeCommand(pick.command, 'ghostline');
      else await vscode.commands.executeCommand(pick.command);
    }),
  );
}

async function selectModel(d: CommandDeps): Promise<void> {
  const bundled = defaultModelDir(d.context.extensionPath);
  const items: (vscode.QuickPickItem & { dir?: string; command?: string })[] = [
    { label: `$(package) ${path.basename(bundled)}`, description: `bundled, ${formatBytes(folderBytes(bundled))}`, dir: '' },
    ...installedModelItems(d.context).map((i) => ({ ...i, label: `$(database) ${i.label}` })),
    { label: '$(cloud-download) Download a model…', description: 'recommended models or any Hugging Face repo', command: 'ghostline.downloadModel' },
    { label: '$(folder-opened) Choose a model folder…', description: 'config.json, tokenizer.json, onnx/model*.onnx' },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: 'Ghostline: Select Model' });
  if (!pick) return;
  if (pick.command) {
    await vscode.commands.executeCommand(pick.command);
    return;
  }
  let dir = pick.dir;
  if (dir === undefined) {
    const uri = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Use this model' });
    if (!uri?.[0]) return;
    dir = uri[0].fsPath;
  }
  // A user choice goes to user settings; the configuration listener reloads the model.
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', dir, vscode.ConfigurationTarget.Global);
}

/** Repository context gathering, for Show Stats: how many gathers ran (in the background) and how long they took. */
function contextLine(g: GatherStats): string {
  if (g.gathers === 0) return 'repository context: nothing gathered yet';
  const sorted = [...g.durationsMs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  return `repository context: ${g.gathers} gathers in the background, p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, ${g.timeouts} past the deadline, ${g.failures} failed`;
}

/** The next-edit model and its worker's memory, and what happened to next edits, when next edit is on. */
async function nextEditLine(d: CommandDeps): Promise<string> {
  const info = d.nextEditEngine.info;
  const source = d.nextEditEngine.describe();
  if (!source && d.nextEdit.stats.requested === 0) return '';
  const rss = await d.nextEditEngine.memoryBytes();
  const model = info ? `${source} on the ${describeDevice(info.device)}${rss ? `, worker ${Math.round(rss / 1e6)} MB` : ''}` : (source ?? 'no next-edit model');
  return `; ${model}; ${d.nextEdit.stats.summary()}`;
}
