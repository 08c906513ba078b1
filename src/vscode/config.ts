import * as vscode from 'vscode';
import { completionSettings } from '../completion/settings';
import type { CompletionSettings } from '../completion/types';
import { validateSettings, type SettingValues } from '../completion/settingsSchema';
import { presetFromSettings, type GeneratePreset } from '../completion/presets';
import { readServerSettings, type ServerSettings } from '../servers/serverSettings';
import { expandHome } from '../platform/expandHome';
import { readCaFile, type TransportOptions } from '../net/httpTransport';
import type { DeviceSetting } from '../engine/shared/device';

/**
 * Reads Ghostline's settings for a document (workspace folder and language overrides apply), validates them
 * with the shared schema, and reports each problem once, naming the setting.
 */
export class Config {
  private readonly reported = new Set<string>();
  /** Every problem reported this session, in order (for "Show Log" and tests). */
  readonly problems: string[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {}

  values(scope?: vscode.TextDocument): SettingValues {
    const cfg = vscode.workspace.getConfiguration('ghostline', scope ? { uri: scope.uri, languageId: scope.languageId } : undefined);
    const { values, problems } = validateSettings((key) => cfg.get(key));
    for (const p of problems) this.report(p);
    return values;
  }

  completion(doc?: vscode.TextDocument): CompletionSettings {
    return completionSettings(this.values(doc));
  }

  generate(doc?: vscode.TextDocument): GeneratePreset {
    return presetFromSettings('generate', this.values(doc));
  }

  debounceMs(doc?: vscode.TextDocument): number | undefined {
    const d = this.values(doc).debounceMs as number;
    return d >= 0 ? d : undefined;
  }

  /** The engine's load-time settings, read (and validated) once per load. */
  engineOptions(): { threads: number; moveCachedRunsOverMs: number; device: DeviceSetting } {
    const v = this.values();
    return {
      threads: v['engine.threads'] as number,
      moveCachedRunsOverMs: v['engine.moveCachedRunsOverMs'] as number,
      device: v['engine.device'] as DeviceSetting,
    };
  }

  /** Whether suggestions are on for this document's language. */
  enabledFor(doc: vscode.TextDocument): boolean {
    const cfg = vscode.workspace.getConfiguration('ghostline', { uri: doc.uri, languageId: doc.languageId });
    if (cfg.get<boolean>('enable') === false) return false;
    const langs = cfg.get<unknown>('languages');
    if (langs && typeof langs === 'object' && !Array.isArray(langs)) {
      const map = langs as Record<string, unknown>;
      const v = doc.languageId in map ? map[doc.languageId] : map['*'];
      if (typeof v === 'boolean') return v;
      if (v !== undefined) this.report(`ghostline.languages["${doc.languageId}"] must be true or false; ignored.`);
    } else if (langs !== undefined) {
      this.report('ghostline.languages must be an object like {"*": true, "markdown": false}; ignored.');
    }
    return true;
  }

  /**
   * The model folder and file. In an untrusted workspace, values from the workspace are ignored: a
   * repository must not make the editor load an arbitrary file as a model.
   */
  model(): { path: string; file: string } {
    return { path: this.trustedPath('modelPath'), file: this.trustedPath('modelFile') };
  }

  /**
   * Next edit: on only with a model folder (read as the completion model's folder is, trust included) or a server
   * URL (user settings only, as the team server's: a repository must not send the user's code to a server it names).
   */
  nextEdit(): { enable: boolean; modelPath: string; serverUrl: string } {
    const server = vscode.workspace.getConfiguration('ghostline').inspect<unknown>('nextEdit.serverUrl');
    if (server?.workspaceValue !== undefined || server?.workspaceFolderValue !== undefined) {
      this.report('ghostline.nextEdit.serverUrl is ignored in workspace settings: set it in your user settings.');
    }
    let serverUrl = typeof server?.globalValue === 'string' ? server.globalValue.trim().replace(/\/+$/, '') : '';
    if (serverUrl && !/^https?:\/\/[^/\s]+/.test(serverUrl)) {
      this.report(`ghostline.nextEdit.serverUrl must be an http:// or https:// URL, got "${serverUrl}"; ignored.`);
      serverUrl = '';
    }
    return { enable: this.values()['nextEdit.enable'] === true, modelPath: this.trustedPath('nextEdit.modelPath'), serverUrl };
  }

  /** Whether next edit is on: one read, cheap enough for every keystroke (nextEdit() validates every setting). */
  nextEditEnabled(): boolean {
    return vscode.workspace.getConfiguration('ghostline').get<unknown>('nextEdit.enable') === true;
  }

  /** A folder setting; in an untrusted workspace, the workspace's own value is reported and ignored. */
  private trustedPath(key: string): string {
    const cfg = vscode.workspace.getConfiguration('ghostline');
    const i = cfg.inspect<string>(key);
    const v = vscode.workspace.isTrusted ? cfg.get<string>(key) : (i?.globalValue ?? i?.defaultValue);
    if (!vscode.workspace.isTrusted && (i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined)) {
      this.report(`ghostline.${key} from this untrusted workspace is ignored.`);
    }
    if (v !== undefined && typeof v !== 'string') {
      this.report(`ghostline.${key} must be a string (a folder path); ignored.`);
      return '';
    }
    return (v ?? '').trim();
  }

  /**
   * Where suggestions come from, from user settings only: a value in workspace settings is reported and
   * ignored (a repository must not send the user's code to a server it names).
   */
  server(): ServerSettings {
    const cfg = vscode.workspace.getConfiguration('ghostline');
    const { settings, problems } = readServerSettings((key) => {
      const i = cfg.inspect(key);
      if (i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined) {
        this.report(`ghostline.${key} is ignored in workspace settings: set it in your user settings.`);
      }
      return i?.globalValue;
    });
    for (const p of problems) this.report(p);
    return settings;
  }

  /** VS Code's proxy settings (user level), for the server backends. */
  proxy(): ProxySettings {
    return proxySettings();
  }

  /** Forget reported problems (after the user edits settings, a still-wrong value is reported again). */
  resetReports(): void {
    this.reported.clear();
  }

  private report(problem: string): void {
    if (this.reported.has(problem)) return;
    this.reported.add(problem);
    this.problems.push(problem);
    this.log.warn(problem);
    void vscode.window.showWarningMessage(`Ghostline: ${problem}`);
  }
}

export interface ProxySettings {
  proxy: string;
  noProxy: string[];
  systemCas: boolean;
  strictSSL: boolean;
}

/**
 * VS Code's `http.proxy`, `http.noProxy` and `http.proxyStrictSSL` (user level only: a workspace must not
 * route traffic elsewhere), for src/net/httpTransport.ts: the server backends and Download Model both use
 * them, on top of HTTPS_PROXY / HTTP_PROXY / NO_PROXY from the environment.
 */
function proxySettings(): ProxySettings {
  const http = vscode.workspace.getConfiguration('http');
  const proxy = http.inspect<string>('proxy')?.globalValue;
  const noProxy = http.inspect<unknown>('noProxy')?.globalValue;
  return {
    proxy: typeof proxy === 'string' ? proxy.trim() : '',
    noProxy: Array.isArray(noProxy) ? noProxy.filter((h): h is string => typeof h === 'string') : [],
    strictSSL: http.inspect<boolean>('proxyStrictSSL')?.globalValue !== false,
    // As VS Code's own requests do (http.systemCertificates, default true): the OS store is where Windows and
    // macOS keep a company's CA.
    systemCas: http.get<boolean>('systemCertificates', true) !== false,
  };
}

/**
 * The transport of Download Model: the proxy settings above, and `ghostline.download.caFile` (user level) for a
 * mirror or a TLS-inspecting proxy signed by a company CA that is not in the OS store. A bad file throws an
 * error naming it, which the download reports.
 */
export function downloadTransport(): TransportOptions {
  const caFile = vscode.workspace.getConfiguration('ghostline').inspect<string>('download.caFile')?.globalValue?.trim();
  return { ...proxySettings(), caPem: caFile ? readCaFile(expandHome(caFile)) : undefined };
}
