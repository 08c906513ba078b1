import * as path from 'node:path';
import * as vscode from 'vscode';
import { NATIVE_LOAD_ERROR } from '../engine/shared/nativeLoad';
import type { CompletionService } from '../completion/completionService';
import { modelTraits } from '../completion/modelTraits';
import { pickFimTemplate, type FimTemplate } from '../completion/prompt/fimTemplates';
import type { EngineClient } from '../engine/host/client';
import { defaultModelDir } from '../engine/host/defaultModel';
import type { ModelInfo } from '../engine/shared/types';
import { describeDevice, type DeviceReport } from '../engine/shared/device';
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
  /** Why the GPU failed in this window, once it has: later loads stay on the CPU until Measure Devices Again. */
  private gpuFailed: string | null = null;

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
  ) {
    client.onDeviceChange = (report) => this.deviceChanged(report);
  }

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
      const options = this.config.engineOptions();
      const device = this.gpuFailed ? 'cpu' : options.device;
      const info = await this.client.load(dir, { ...options, device, onnxFile: file || undefined, deviceVerdictFile: this.shared.deviceVerdictFile });
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
      const where = this.gpuFailed
        ? `CPU: the GPU failed earlier in this window (${this.gpuFailed}); Measure Devices Again tries it again`
        : describeDevice(info.device);
      this.log.info(`device: ${where}`);
      if (!this.primary) return true;
      this.status.setDevice(where);
      this.status.set('idle', info.name);
      if (options.device === 'gpu' && info.device.device === 'cpu' && !this.gpuFailed) this.warnNoGpu(info.device);
      void this.warmUp();
      return true;
    } catch (err) {
      if (gen !== this.generation) return false;
      this.info = null;
      this.service = null;
      this.status.setDevice(null);
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

  /** Forgets a GPU failure of this window, so the next load may use the GPU again (Measure Devices Again). */
  forgetGpuFailure(): void {
    this.gpuFailed = null;
  }

  /** The setting asks for the GPU and none could be opened: said once per load, with a way to stop asking. */
  private warnNoGpu(report: DeviceReport): void {
    void vscode.window.showWarningMessage(`Ghostline runs the model on the CPU: ${report.reason}.`, 'Use the CPU', 'Show Log').then((choice) => {
      if (choice === 'Use the CPU') void vscode.workspace.getConfiguration('ghostline').update('engine.device', 'cpu', vscode.ConfigurationTarget.Global);
      if (choice === 'Show Log') this.log.show();
    });
  }

  /**
   * The GPU failed mid-session and the worker moved the model to the CPU (the request that met the failure
   * was answered there): one message, and the CPU for the rest of this window.
   */
  private deviceChanged(report: DeviceReport): void {
    if (this.info) this.info = { ...this.info, device: report };
    const why = report.fellBack ?? report.reason;
    this.gpuFailed = why;
    this.log.warn(`device: ${describeDevice(report)}`);
    if (!this.primary) return;
    this.status.setDevice(describeDevice(report));
    void vscode.window
      .showWarningMessage('Ghostline: the GPU failed, so the model runs on the CPU for the rest of this window. Nothing you typed was lost.', 'Show Log')
      .then((choice) => {
        if (choice === 'Show Log') this.log.show();
      });
  }

  /**
   * Fills the cache at the cursor with the very prompt the next suggestion uses, so the first keystroke only
   * prefills a few tokens: `service`'s own prefill where its backend has one (a server's prompt cache), else a
   * completion request whose result also lands in the local KV cache. `service` defaults to the local model's.
   */
  async warmUp(service: CompletionService | null = this.service): Promise<void> {
    if (!service) return;
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
      if (await service.prefill(req)) {
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
