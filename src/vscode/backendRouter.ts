import * as vscode from 'vscode';
import { HealthCheckedGenerator } from '../servers/healthCheckedGenerator';
import { readCaFile, type ServerFetch, serverFetch } from '../net/httpTransport';
import { probeFimMarkers } from '../servers/fimProbe';
import { probeServer } from '../servers/probeServer';
import { ServerGenerator } from '../servers/serverGenerator';
import { ServerHealth } from '../servers/serverHealth';
import { setUpServerTokenizer } from '../servers/serverTokenizer';
import { serverConfigError, serverTemplate, type ServerSettings } from '../servers/serverSettings';
import type { CompletionService } from '../completion/completionService';
import type { ModelTraits } from '../completion/types';
import { GENERIC_CALIBRATION } from '../completion/gate/genericCalibration';
import { readCalibration } from '../completion/gate/readCalibration';
import type { Generator } from '../completion/generator';
import type { SessionStats } from '../completion/sessionStats';
import type { Config } from './config';
import { editorService } from './editorService';
import type { ModelLoader } from './modelLoader';
import { serverKeyName } from './serverKey';
import type { StatusBar } from './statusBar';

/** Used when neither the settings nor the server say how long the served model's context is. */
const FALLBACK_CONTEXT_TOKENS = 8192;
/** Generate from Selection writes far more than a suggestion: it gets at least this long. */
const GENERATE_TIMEOUT_MS = 60_000;
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

  /** After `failed` threw: the service to try the same request on now (the local model), if any. */
  fallbackFor(failed: CompletionService): CompletionService | null {
    if (!this.server || failed !== this.server.service || !this.server.settings.fallbackToLocal) return null;
    return this.d.loader.service;
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

  /** Fills the cache at the cursor: the server's prompt cache, or the local KV cache. */
  async warm(): Promise<void> {
    const service = this.service();
    if (!service || service !== this.server?.service) return this.d.loader.warm();
    await this.d.loader.warmWith(service);
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
    this.d.loader.primary = settings.backend === 'local';
    if (settings.backend === 'local') {
      this.d.stats.backend = 'local';
      if (this.d.loader.info) this.d.status.set('idle', this.d.loader.info.name);
      return;
    }
    const problem = serverConfigError(settings);
    if (problem) return this.fail(settings, problem, false, false); // Config has shown it, naming the setting
    const origin = new URL(settings.url).origin;
    const label = `${settings.backend} at ${origin}`;
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
    const opts = { kind: settings.backend, url: settings.url, model: settings.model || undefined, apiKey, fetch: fetchImpl };
    const health = new ServerHealth();
    const servers = [
      new ServerGenerator({ ...opts, timeoutMs: settings.timeoutMs }),
      new ServerGenerator({ ...opts, timeoutMs: Math.max(GENERATE_TIMEOUT_MS, settings.timeoutMs) }),
    ];
    // Ollama with the FIM format named in settings: Ghostline's own prompt, raw, which carries the extra
    // context from other files and the stable-to-volatile layout (Ollama's `suffix` builds prefix+suffix only).
    let template = serverTemplate(settings);
    if (settings.backend === 'ollama' && settings.promptFormat !== 'auto' && template) for (const s of servers) s.useOwnPrompt();
    const inline = new HealthCheckedGenerator(servers[0], health);
    const generateWith = new HealthCheckedGenerator(servers[1], health);
    const traits: ModelTraits = {
      contextTokens: settings.contextTokens || FALLBACK_CONTEXT_TOKENS,
      calibration: GENERIC_CALIBRATION,
      calibrationSource: 'generic (server)',
    };
    const service = editorService(
      inline,
      () => template,
      () => traits,
      { config: this.d.config, syntax: this.d.loader.syntax, ring: this.d.loader.ring, repo: this.d.loader.repo, calibrations: this.d.loader.calibrations },
      `${settings.backend} ${settings.url} ${settings.model}`,
    );
    // Only this connection's health speaks for the server: a request of a replaced connection fails when its
    // client is closed ("The client is destroyed"), which says nothing about the server now in use.
    health.onChange = (state, err) => {
      if (this.server?.health === health) this.onHealth(state, err);
    };
    this.server = { settings, label, service, generateWith, health, http: fetchImpl };

    try {
      const probe = await probeServer({ ...opts, timeoutMs: Math.min(settings.timeoutMs, 10_000) });
      if (gen !== this.generation) return;
      if (!settings.contextTokens && probe.contextTokens) traits.contextTokens = probe.contextTokens;
      // A model the server cannot fill in the middle for (no "insert" template) gets Ghostline's prompt.
      if (probe.fillsInTheMiddle === false) for (const s of servers) s.useOwnPrompt();
      // llama.cpp's routes take a grammar: token healing is steered there as the local engine does it.
      if (probe.llamaCpp) for (const s of servers) s.takesGrammar();
      // The served model must read the token sequences the model was trained on: compared with the local
      // model's tokenizer; token ids when only its splitting of text differs, else one warning (issue 27).
      const tokens = await setUpServerTokenizer({ ...opts, timeoutMs: Math.min(settings.timeoutMs, 10_000) }, this.d.loader.modelDir(), servers);
      if (gen !== this.generation) return;
      if (tokens.template) template = tokens.template;
      // The served model reads the local model's own token sequences: its log-probabilities are the local
      // model's (bench:server-quality), so the local model's calibration gates them, not the generic one.
      if (tokens.check.verdict === 'same' || tokens.check.verdict === 'ids') {
        const cal = readCalibration(this.d.loader.modelDir());
        traits.calibration = cal.calibration;
        traits.calibrationSource = `${cal.source} (the server runs the local model's tokens)`;
      }
      if (tokens.check.verdict === 'differs') {
        this.d.log.warn(`${label}: ${tokens.check.message}`);
        this.d.status.setWarning(tokens.check.message);
      } else this.d.log.info(`${label}: ${tokens.check.message}`);
      const ownPrompt = settings.backend === 'openai' || servers[0].sendsOwnPrompt;
      // Our FIM prompt as text: the served model must have its markers as tokens (with ids they were compared above).
      if (ownPrompt && template && !servers[0].sendsTokenIds && settings.backend !== 'ollama' && tokens.check.verdict !== 'differs') {
        const fim = await probeFimMarkers({ ...opts, timeoutMs: Math.min(settings.timeoutMs, 10_000) }, template);
        if (gen !== this.generation) return;
        if (fim.verdict === 'missing') {
          this.d.log.warn(`${label}: ${fim.message}`);
          this.d.status.setWarning(fim.message);
        } else this.d.log.info(`${label}: ${fim.message}`);
      }
      const ids = servers[0].sendsTokenIds ? ' as token ids' : '';
      const fim = ownPrompt ? `${template?.family ?? 'none (prefix-only prompts)'}${ids}` : "the server's own template";
      this.d.log.info(
        `connected to ${label}: ${probe.models.join(', ') || 'model unknown'}, context ${traits.contextTokens} tokens, ` +
          `FIM ${fim}, calibration ${traits.calibrationSource}${apiKey ? ', with an API key' : ''}`,
      );
      this.d.status.set('idle', label);
      void this.warm();
    } catch (err) {
      if (gen !== this.generation) return;
      health.failed(err instanceof Error ? err : new Error(String(err)));
    }
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
