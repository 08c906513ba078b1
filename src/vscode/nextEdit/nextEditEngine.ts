import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Generator } from '../../completion/generator';
import { nextEditModelProblem, nextEditModelWarning } from '../../completion/nextEdit/nextEditModel';
import { EngineClient } from '../../engine/host/client';
import { ServerGenerator } from '../../servers/serverGenerator';
import { errorMessage } from '../../engine/shared/errors';
import type { ModelInfo } from '../../engine/shared/types';
import type { Config } from '../config';

/**
 * The next-edit model, in a worker of its own: a next edit never waits behind an inline suggestion's prefill,
 * and each model keeps its own KV cache (the next-edit prompt grows only at its end while the history does).
 * Loaded when `ghostline.nextEdit.enable` is on and a model folder is set; one message per problem.
 */
export class NextEditEngine implements vscode.Disposable {
  private client: EngineClient | null = null;
  private loaded: { dir: string; info: ModelInfo } | null = null;
  private loading: Promise<Generator | null> | null = null;
  private server: { url: string; generator: Generator } | null = null;
  private reported = new Set<string>();

  constructor(
    private readonly config: Config,
    private readonly log: vscode.LogOutputChannel,
    private readonly extensionPath: string,
    private readonly deviceVerdictFile: string,
  ) {}

  get info(): ModelInfo | null {
    return this.loaded?.info ?? null;
  }

  /** The loaded model as a Generator, loading it first when the settings ask for it; null when off or failed. */
  generator(): Promise<Generator | null> {
    const { enable, modelPath, serverUrl } = this.config.nextEdit();
    if (!enable) return Promise.resolve(null);
    if (serverUrl) return Promise.resolve(this.serverGenerator(serverUrl));
    if (!modelPath) return Promise.resolve(null);
    if (this.loaded?.dir === modelPath && this.client) return Promise.resolve(this.client);
    this.loading ??= this.load(modelPath).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /**
   * A llama.cpp server serving a next-edit model (Sweep's are published as GGUF, which llama-server runs): the
   * prompt goes as text to /completion, whose tokenizer reads the format's special tokens. A failing server is
   * reported once, not on every edit.
   */
  private serverGenerator(url: string): Generator {
    if (this.server?.url === url) return this.server.generator;
    const inner = new ServerGenerator({ kind: 'llama.cpp', url, timeoutMs: 15_000 });
    const generator: Generator = {
      generate: async (prompt, options, hooks) => {
        try {
          return await inner.generate(prompt, options, hooks);
        } catch (err) {
          if (!hooks?.signal?.aborted) this.reportOnce(`The next-edit server at ${url} failed: ${errorMessage(err)}`, 'error');
          throw err;
        }
      },
    };
    this.server = { url, generator };
    return generator;
  }

  /** Where next edits come from, for Show Stats. */
  describe(): string | null {
    if (this.server) return `next-edit server ${this.server.url}`;
    return this.loaded ? `next-edit model ${this.loaded.info.name}` : null;
  }

  /** The worker's memory, for Show Stats. */
  async memoryBytes(): Promise<number | null> {
    if (!this.loaded || !this.client) return null;
    return (await this.client.workerStats().catch(() => null))?.rssBytes ?? null;
  }

  /** Settings changed: drop the model; the next request loads what the settings now say. */
  async reset(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.loaded = null;
    this.server = null;
    this.reported.clear();
    await client?.dispose();
  }

  private async load(dir: string): Promise<Generator | null> {
    await this.reset();
    const client = new EngineClient({
      workerPath: path.join(this.extensionPath, 'dist', 'worker.js'),
      onWorkerOutput: (line) => this.log.warn(`next-edit worker: ${line}`),
    });
    try {
      const info = await client.load(dir, { ...this.config.engineOptions(), deviceVerdictFile: this.deviceVerdictFile });
      const problem = nextEditModelProblem(info);
      if (problem) {
        await client.dispose();
        this.reportOnce(problem, 'error');
        return null;
      }
      const warning = nextEditModelWarning(info);
      if (warning) this.reportOnce(warning, 'warning');
      this.log.info(`next-edit model ${info.name} loaded from ${dir}`);
      this.client = client;
      this.loaded = { dir, info };
      return client;
    } catch (err) {
      await client.dispose();
      this.reportOnce(`The next-edit model could not be loaded from ${dir}: ${errorMessage(err)}`, 'error');
      return null;
    }
  }

  private reportOnce(message: string, level: 'error' | 'warning'): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.log[level === 'error' ? 'error' : 'warn'](message);
    const show = level === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    void show(`Ghostline: ${message}`);
  }

  dispose(): void {
    void this.reset();
  }
}
