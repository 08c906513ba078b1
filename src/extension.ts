import * as path from 'node:path';
import * as vscode from 'vscode';
import { AdaptiveDebounce } from './completion/adaptiveDebounce';
import { BackendRouter } from './vscode/backendRouter';
import { SessionStats } from './completion/sessionStats';
import { EngineClient } from './engine/host/client';
import { registerCommands } from './vscode/commands';
import { samePath } from './platform/pathInside';
import { registerModelCommands } from './vscode/downloadModel';
import { Config } from './vscode/config';
import { InlineProvider } from './vscode/inlineProvider';
import { ModelLoader } from './vscode/modelLoader';
import { CompletionShared } from './vscode/completionShared';
import { feedRing } from './vscode/ringFeeder';
import { StatusBar } from './vscode/statusBar';
import { EditHistory } from './completion/nextEdit/editHistory';
import { feedEditHistory } from './vscode/nextEdit/historyFeeder';
import { NextEditController } from './vscode/nextEdit/nextEditController';
import { NextEditDecorations } from './vscode/nextEdit/nextEditDecorations';
import { NextEditEngine } from './vscode/nextEdit/nextEditEngine';

let client: EngineClient | null = null;

/** Wires the editor to the engine: everything here is a thin adapter over src/engine and src/completion. */
export interface GhostlineApi {
  loader: ModelLoader;
  shared: CompletionShared;
  client: EngineClient;
  stats: SessionStats;
  status: StatusBar;
  config: Config;
  router: BackendRouter;
  nextEdit: NextEditController;
}

export function activate(context: vscode.ExtensionContext): GhostlineApi {
  const log = vscode.window.createOutputChannel('Ghostline', { log: true });
  const stats = new SessionStats();
  const status = new StatusBar(stats);
  const config = new Config(log);
  client = new EngineClient({
    workerPath: path.join(context.extensionPath, 'dist', 'worker.js'),
    onWorkerOutput: (line) => log.warn(`worker: ${line}`),
  });
  const engine = client;
  engine.onCrash = (msg) => {
    log.error(`${msg}; a fresh worker starts on the next request`);
    status.set('error', msg);
  };
  // Grammars, context and calibrations: one owner for the window, used by the local model and a server alike.
  const shared = new CompletionShared(config, log, context.globalStorageUri.fsPath);
  const loader = new ModelLoader(engine, config, status, log, context.extensionPath, shared, () => config.server().backend === 'local');
  const router = new BackendRouter({ loader, shared, config, status, stats, log, secrets: context.secrets });
  const loadLocal = () => (router.wantsLocal() ? loader.load() : Promise.resolve(false));
  const enabled = { value: context.globalState.get<boolean>('ghostline.enabled', true) };
  // Next edit: its own model and worker, fed by the user's edits; off until a next-edit model is set.
  const editHistory = new EditHistory();
  const nextEditEngine = new NextEditEngine(config, log, context.extensionPath, shared.deviceVerdictFile);
  const nextEditDecorations = new NextEditDecorations(vscode.Uri.file(path.join(context.extensionPath, 'media', 'next-edit.svg')));
  const nextEdit = new NextEditController({
    config,
    history: editHistory,
    decorations: nextEditDecorations,
    generator: () => nextEditEngine.generator(),
    syntax: shared.syntax,
    log,
  });
  const debounce = new AdaptiveDebounce();

  context.subscriptions.push(
    log,
    status,
    router,
    vscode.languages.registerInlineCompletionItemProvider(
      { pattern: '**' },
      new InlineProvider({
        service: () => router.service(),
        complete: (s, req, signal) => router.complete(s, req, signal),
        serverName: (s) => router.serverName(s),
        enabled: () => enabled.value,
        config,
        status,
        stats,
        debounce,
        log,
        nextEditAt: (doc, pos) => nextEdit.ghostTextAt(doc, pos) !== null,
      }),
    ),
    registerCommands({ client: engine, config, status, stats, loader, shared, router, log, context, enabled, nextEdit, nextEditEngine }),
    feedEditHistory(editHistory, () => nextEdit.enabled()),
    nextEditEngine,
    nextEditDecorations,
    nextEdit,
    registerModelCommands(context, { log, modelInUse: (dir) => loader.info !== null && samePath(dir, loader.modelDir()) }),
    feedRing(shared.ring),
    shared,
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === vscode.window.activeTextEditor?.document && e.contentChanges.length > 0) debounce.keystroke(performance.now());
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('ghostline') && !e.affectsConfiguration('http')) return;
      config.resetReports();
      config.values(vscode.window.activeTextEditor?.document); // report a bad value now, not on the next keystroke
      const backendChanged = e.affectsConfiguration('ghostline.backend') || e.affectsConfiguration('ghostline.server');
      if (backendChanged || e.affectsConfiguration('http.proxy') || e.affectsConfiguration('http.proxyStrictSSL')) void router.connect();
      if (e.affectsConfiguration('ghostline.nextEdit') || e.affectsConfiguration('ghostline.engine')) void nextEditEngine.reset();
      if (
        e.affectsConfiguration('ghostline.modelPath') ||
        e.affectsConfiguration('ghostline.modelFile') ||
        e.affectsConfiguration('ghostline.engine.threads') ||
        e.affectsConfiguration('ghostline.engine.device') ||
        e.affectsConfiguration('ghostline.engine.moveCachedRunsOverMs') ||
        (backendChanged && loader.info === null)
      ) {
        void loadLocal();
      }
    }),
    context.secrets.onDidChange((e) => {
      if (e.key.startsWith('ghostline.serverKey:')) void router.connect();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void loadLocal()),
    vscode.window.onDidChangeWindowState((s) => {
      if (s.focused) void router.warmUp();
    }),
    { dispose: () => void engine.dispose() },
  );
  if (!enabled.value) status.set('disabled');
  void router.connect();
  void loadLocal().then(() => {
    if (!enabled.value) status.set('disabled');
  });
  // The API returned to tests (and other extensions): read-only handles, no extra behaviour.
  return { loader, shared, client: engine, stats, status, config, router, nextEdit };
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = null;
}
