import * as vscode from 'vscode';
import { HealthCheckedGenerator } from '../servers/healthCheckedGenerator';
import { readCaFile, type ServerFetch, serverFetch } from '../net/httpTransport';
import { connectServer, serverLabel } from '../servers/connectServer';
import { ServerHealth } from '../servers/serverHealth';
import { serverConfigError, type ServerSettings } from '../servers/serverSettings';
import type { CompletionService } from '../completion/completionService';
import type { CompletionOutcome, CompletionRequest } from '../completion/types';
import type { Generator } from '../completion/generator';
import type { SessionStats } from '../completion/sessionStats';
import type { Config } from './config';
import { editorService } from './editorService';
import type { CompletionShared } from './completionShared';
import type { ModelLoader } from './modelLoader';
import { serverKeyName } from './serverKey';
import type { StatusBar } from './statusBar';

/** Settings written together (a settings sync, a script, a test) arrive as several events within this. */
const CONNECT_COALESCE_MS = 150;

interface ServerBackend {
  settings: ServerSettings;
  /** "llama.cpp at http://host:8080", for the log, Show Stats and the status bar. */
  label: string;
  service: CompletionService;
  /** The same server with the longer timeout of Generate from Selection. */
  generateWith: Generator;
  health: ServerHealth;
  /** Its connection pool, closed when the settings change. */
  http: ServerFetch;
}

export interface RouterDeps {
  loader: ModelLoader;
  /** The grammars, context and calibrations the server's service shares with the local model's. */
  shared: CompletionShared;
  config: Config;
  status: StatusBar;
  stats: SessionStats;
  log: vscode.LogOutputChannel;
  secrets: vscode.SecretStorage;
}

/**
 * Picks where each request goes: the local model, or the team server of the user's settings, with the
 * local model as the fallback while the server is in backoff (when ghostline.server.fallbackToLocal).
 * The pipeline is the same either way; only the generator under the CompletionService differs.
 */
export class BackendRouter implements vscode.Disposable {
  private server: ServerBackend | null = null;
  /** Settings that name a server, even when connecting to it failed. */
  private wanted: ServerSettings | null = null;
  private generation = 0;
  private pending: Promise<void> | null = null;

  constructor(private readonly d: RouterDeps) {}

  /** The server settings in use (null: the local backend). */
  get current(): ServerSettings | null {
    return this.wanted;
  }

  /** Whether the local model is needed: it is the backend, or the fallback. */
  wantsLocal(): boolean {
    const s = this.d.config.server();
    return s.backend === 'local' || s.fallbackToLocal;
  }

  /** The service for the next request. */
  service(): CompletionService | null {
    const s = this.server;
    if (!this.wanted) return this.d.loader.service;
    if (s && (s.health.available() || !s.settings.fallbackToLocal)) return s.service;
    return this.wanted.fallbackToLocal ? this.d.loader.service : null;
  }

  /**
   * Runs a suggestion request on `service` (from service()); when that is the server's and it fails while the
   * local model is its fallback, the same request goes to the local model at once. The one place that decides
   * where a request goes: service() before it, this after a failure. Returns the outcome and who answered.
   */
  async complete(
    service: CompletionService,
    req: CompletionRequest,
    signal: AbortSignal,
  ): Promise<{ outcome: CompletionOutcome; answered: CompletionService }> {
    try {
      return { outcome: await service.complete(req, signal), answered: service };
    } catch (err) {
      const fallback = this.server && service === this.server.service && this.server.settings.fallbackToLocal ? this.d.loader.service : null;
      if (!fallback || signal.aborted) throw err;
      this.d.log.warn(`server request failed (${err instanceof Error ? err.message : String(err)}); asking the local model`);
      return { outcome: await fallback.complete(req, signal), answered: fallback };
    }
  }

  /** The server's name when `service` is the server's (for the stats). */
  serverName(service: CompletionService): string | undefined {
    return this.server && service === this.server.service ? this.server.label : undefined;
  }

  /** The generator of Generate from Selection, or null when none is ready. */
  generator(): Generator | null {
    const s = this.server;
    if (s && (s.health.available() || !s.settings.fallbackToLocal)) return s.generateWith;
    if (this.wanted && !this.wanted.fallbackToLocal) return null;
    return this.d.loader.info ? this.d.loader.client : null;
  }

  /** Why generator() is null, in words. */
  notReadyReason(): string {
    if (this.wanted && !this.wanted.fallbackToLocal) return `the server is not connected (${this.d.status.detail || 'see "Ghostline: Show Log"'})`;
    return 'the model is not loaded (see "Ghostline: Show Log")';
  }

  /** Warms up the backend in use at the cursor (ModelLoader.warmUp). */
  async warmUp(): Promise<void> {
    const service = this.service();
    if (!service || service !== this.server?.service) return this.d.loader.warmUp();
    await this.d.loader.warmUp(service);
  }

  /**
   * (Re)connects after a settings or key change; the local backend needs nothing here. Changes that come
   * together (several settings written at once) make one connection, not one per setting.
   */
  connect(): Promise<void> {
    // The old connection is retired at once, not after the coalescing delay: no request or prefetch goes to
    // a server (or with a key, a format) the user has just changed away from, and a connection still being
    // made for the old settings is abandoned.
    this.generation++;
    this.retire();
    this.pending ??= new Promise<void>((resolve) => setTimeout(resolve, CONNECT_COALESCE_MS)).then(() => {
      this.pending = null;
      return this.connectNow();
    });
    return this.pending;
  }

  private async connectNow(): Promise<void> {
    const gen = ++this.generation;
    this.retire();
    this.d.status.setWarning(null); // a warning speaks of the connection it was found on
    const settings = this.d.config.server();
    this.wanted = settings.backend === 'local' ? null : settings;
    if (settings.backend === 'local') {
      this.d.stats.backend = 'local';
      if (this.d.loader.info) this.d.status.set('idle', this.d.loader.info.name);
      return;
    }
    const problem = serverConfigError(settings);
    if (problem) return this.fail(settings, problem, false, false); // Config has shown it, naming the setting
    const label = serverLabel(settings.backend, settings.url);
    this.d.stats.backend = label;
    this.d.status.set('loading', `connecting to ${label}`);
    let fetchImpl: ServerFetch;
    try {
      const ca = settings.caFile ? readCaFile(settings.caFile) : undefined;
      fetchImpl = serverFetch({ ...this.d.config.proxy(), caPem: ca });
    } catch (err) {
      return this.fail(settings, err instanceof Error ? err.message : String(err), false);
    }
    const apiKey = (await this.d.secrets.get(serverKeyName(settings.url))) || undefined;
    if (gen !== this.generation) return;
    // Requests wait for the connection's answers (or go to the local model meanwhile, with fallbackToLocal):
    // none goes out with a format or a tokenizer the connection has not settled.
    const conn = await connectServer({ ...settings, kind: settings.backend, apiKey, fetch: fetchImpl, localModelDir: this.d.loader.modelDir() });
    if (gen !== this.generation) {
      void fetchImpl.close().catch(() => undefined);
      return;
    }
    const health = new ServerHealth();
    const service = editorService(
      new HealthCheckedGenerator(conn.inline, health),
      () => conn.template,
      () => conn.traits,
      this.d.shared,
      `${settings.backend} ${settings.url} ${settings.model}`,
    );
    // Only this connection's health speaks for the server: a request of a replaced connection fails when its
    // client is closed ("The client is destroyed"), which says nothing about the server now in use.
    health.onChange = (state, err) => {
      if (this.server?.health === health) this.onHealth(state, err);
    };
    this.server = { settings, label, service, generateWith: new HealthCheckedGenerator(conn.generate, health), health, http: fetchImpl };
    if (conn.error) {
      health.failed(conn.error);
      return;
    }
    for (const w of conn.warnings) this.d.log.warn(`${label}: ${w}`);
    for (const n of conn.notes) this.d.log.info(`${label}: ${n}`);
    if (conn.warnings.length > 0) this.d.status.setWarning(conn.warnings.join(' '));
    this.d.log.info(`connected to ${conn.summary}`);
    this.d.status.set('idle', label);
    void this.warmUp();
  }

  dispose(): void {
    this.generation++;
    this.retire();
  }

  /** Closes the current server backend: its requests are aborted, its service answers nothing more. */
  private retire(): void {
    this.server?.service.close();
    void this.server?.http.close().catch(() => undefined);
    this.server = null;
  }

  private onHealth(state: 'up' | 'down', err: Error | null): void {
    const s = this.server;
    if (!s) return;
    if (state === 'up') {
      this.d.log.info(`${s.label} answers again`);
      this.d.stats.backend = s.label;
      this.d.status.set('idle', s.label);
      return;
    }
    this.fail(s.settings, err?.message ?? 'it failed', true);
  }

  /** One message per failure (the log has each), and the status bar says what answers meanwhile. */
  private fail(settings: ServerSettings, message: string, retrying: boolean, notify = true): void {
    const fallback = settings.fallbackToLocal && this.d.loader.info !== null;
    const then = retrying ? 'Ghostline tries again with backoff' : 'fix the setting to connect';
    this.d.log.error(`server backend: ${message}${fallback ? '; the local model answers meanwhile' : ''} (${then})`);
    this.d.stats.backend = fallback ? `local (${settings.backend} server unavailable)` : `${settings.backend} (unavailable)`;
    this.d.status.set(fallback ? 'offline' : 'error', message);
    if (!notify) return;
    const actions = /API key/.test(message) ? ['Set Server Key', 'Show Log'] : ['Open Settings', 'Show Log'];
    void vscode.window
      .showWarningMessage(`Ghostline: the ${settings.backend} server: ${message}${fallback ? ' (using the local model meanwhile)' : ''}`, ...actions)
      .then((choice) => {
        if (choice === 'Set Server Key') void vscode.commands.executeCommand('ghostline.setServerKey');
        if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'ghostline.server');
        if (choice === 'Show Log') this.d.log.show();
      });
  }
}
