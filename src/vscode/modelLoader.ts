import * as path from 'node:path';
import * as vscode from 'vscode';
import { NATIVE_LOAD_ERROR } from '../engine/shared/nativeLoad';
import type { CompletionService } from '../completion/completionService';
import { modelTraits } from '../completion/modelTraits';
import { pickFimTemplate, type FimTemplate } from '../completion/prompt/fimTemplates';
import type { EngineClient } from '../engine/host/client';
import { defaultModelDir } from '../engine/host/defaultModel';
import type { ModelInfo } from '../engine/shared/types';
import { expandHome } from '../platform/expandHome';
import type { Config } from './config';
import { documentSource } from './documentSource';
import { editorService } from './editorService';
import type { StatusBar } from './statusBar';
import type { CompletionShared } from './completionShared';

/**
 * Loads the configured model into the worker (the worker frees the previous session), keeps the FIM
 * template and the completion service that goes with it, and warms the cache at the cursor.
 */
export class ModelLoader {
  info: ModelInfo | null = null;
  service: CompletionService | null = null;
  private template: FimTemplate | null = null;
  private generation = 0;

  /**
   * `shared`: the grammars, context and calibrations every service of the window uses (CompletionShared).
   * `isPrimary`: false while a server is the backend: the local model is then only the fallback, and its
   * loading and errors go to the log, not the status bar or a pop-up.
   */
  constructor(
    readonly client: EngineClient,
    private readonly config: Config,
    private readonly status: StatusBar,
    private readonly log: vscode.LogOutputChannel,
    private readonly extensionPath: string,
    private readonly shared: CompletionShared,
    private readonly isPrimary: () => boolean,
  ) {}

  private get primary(): boolean {
    return this.isPrimary();
  }

  /** The loaded model as the calibration store names it: its folder and the ONNX file in use. */
  get modelKey(): string {
    return `local ${this.modelDir()} ${this.info ? path.basename(this.info.onnxFile) : ''}`;
  }

  modelDir(): string {
    const { path: p } = this.config.model();
    return p ? expandHome(p) : defaultModelDir(this.extensionPath);
  }

  async load(): Promise<boolean> {
    const gen = ++this.generation;
    const dir = this.modelDir();
    const { file } = this.config.model();
    this.service?.cancelAll();
    if (this.primary) this.status.set('loading', path.basename(dir));
    this.log.info(`loading model ${dir}${file ? ` (${file})` : ''}`);
    try {
      const info = await this.client.load(dir, { ...this.config.engineOptions(), onnxFile: file || undefined });
      if (gen !== this.generation) return false; // a newer load superseded this one
      this.info = info;
      this.template = pickFimTemplate(info.specialTokens);
      const traits = modelTraits(info, (line) => this.log.warn(line));
      this.service = editorService(
        this.client,
        () => this.template,
        () => traits,
        this.shared,
        this.modelKey,
      );
      this.log.info(
        `model ready: ${info.name}, ${path.basename(info.onnxFile)}, ${info.layers} layers, vocab ${info.vocab}, context ${info.contextLength}, ` +
          `${info.threads} threads, FIM ${this.template?.family ?? 'none (prefix-only prompts)'}, ${info.charsPerToken.toFixed(2)} chars/token, ` +
          `calibration ${traits.calibrationSource}`,
      );
      if (!this.primary) return true;
      this.status.set('idle', info.name);
      void this.warm();
      return true;
    } catch (err) {
      if (gen !== this.generation) return false;
      this.info = null;
      this.service = null;
      const msg = err instanceof Error ? err.message : String(err);
      this.log.error(`model failed to load: ${msg}`);
      if (!this.primary) return false;
      this.status.set('error', msg);
      // A native library that does not load is about this machine, not the model: choosing another model
      // cannot help, a team server can.
      const native = err instanceof Error && err.name === NATIVE_LOAD_ERROR;
      const other = native ? 'Use a Team Server' : 'Select Model';
      const text = native ? `Ghostline cannot run models on this machine: ${msg}` : `Ghostline could not load the model: ${msg}`;
      void vscode.window.showErrorMessage(text, other, 'Show Log').then((choice) => {
        if (choice === 'Select Model') void vscode.commands.executeCommand('ghostline.selectModel');
        if (choice === 'Use a Team Server') void vscode.commands.executeCommand('workbench.action.openSettings', 'ghostline.backend');
        if (choice === 'Show Log') this.log.show();
      });
      return false;
    }
  }

  /**
   * Fills the KV cache at the cursor with the very prompt the next suggestion uses (a completion request
   * whose result also lands in the cache), so the first keystroke only prefills a few tokens.
   */
  async warm(): Promise<void> {
    if (this.service) await this.warmWith(this.service);
  }

  /** Warms `service` at the cursor: its generator's own warm-up (a server's prompt cache) where it has one. */
  async warmWith(service: CompletionService): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const t0 = performance.now();
    const pos = editor.selection.active;
    const req = {
      doc: documentSource(editor.document),
      cursor: { line: pos.line, character: pos.character },
      languageId: editor.document.languageId,
      path: vscode.workspace.asRelativePath(editor.document.uri, false),
      explicit: false,
    };
    try {
      // A server fills its prompt cache without generating; the local engine warms with a real suggestion.
      if (await service.warm(req)) {
        this.log.info(`warmed the server's prompt cache at the cursor in ${Math.round(performance.now() - t0)} ms`);
        return;
      }
      const r = await service.complete(req);
      this.log.info(`warmed at the cursor: ${r.stats?.prefillTokens ?? 0} tokens prefilled in ${Math.round(performance.now() - t0)} ms`);
    } catch (err) {
      this.log.warn(`warm-up failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
