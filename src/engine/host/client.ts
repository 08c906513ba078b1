import * as fs from 'node:fs';
import * as path from 'node:path';
import { cancelledResult } from '../shared/cancelledResult';
import type { DecodeOptions } from '../shared/decodeOptions';
import type { EngineOptions } from '../shared/engineOptions';
import { NATIVE_LOAD_ERROR } from '../shared/nativeLoad';
import { readNativeRequirements, thisHost, unmetRequirement } from '../shared/nativeRequirements';
import type { DeviceReport } from '../shared/device';
import type { FromWorker, ToWorker, WorkerStats } from '../shared/protocol';
import type { Prompt } from '../shared/prompt';
import type { GenerateHooks, GenerateResult, GenerationStats, ModelInfo } from '../shared/types';
import { PREFILL_ASIDE_OPTIONS, PREFILL_ASIDE_CHUNK } from '../shared/prefillAside';
import { startWorker, type WorkerHost, type WorkerKind } from './workerHost';

/** An error reported by the worker, keeping the name it had there (ModelFolderError, RequestError...). */
export class EngineError extends Error {
  constructor(message: string, name = 'EngineError') {
    super(message);
    this.name = name;
  }
}

interface Pending {
  resolve: (value: never) => void;
  reject: (err: Error) => void;
  onText?: (delta: string) => void;
  onFirstLine?: GenerateHooks['onFirstLine'];
  onStart?: () => void;
}

type Reply<T extends FromWorker['type']> = Extract<FromWorker, { type: T }>;

export interface EngineClientOptions {
  /** Path of the worker script; defaults to the bundle's dist/worker.js, or the compiled worker/worker.js. */
  workerPath?: string;
  /** Child process (default, survives native crashes) or worker thread. */
  workerKind?: WorkerKind;
  /**
   * How long a cancelled request may go on before the worker is taken as stuck (a synchronous call that
   * cannot see the cancel: a backtracking tokenizer regex, a runaway native call), killed and replaced.
   * Default 1,500 ms; a healthy worker answers a cancel within one model step.
   */
  cancelGraceMs?: number;
  /** Each line the worker writes to stdout or stderr; default: this process's stderr. */
  onWorkerOutput?: (line: string) => void;
}

/**
 * The typed client of the inference worker. Requests, streamed partial text, cancel, stats.
 * If the worker dies, every pending request fails with an error, and the next request starts a
 * fresh worker and loads the last model again.
 */
export class EngineClient {
  private worker: WorkerHost | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private loaded: { modelDir: string; options: EngineOptions; info: ModelInfo } | null = null;
  private loading: Promise<ModelInfo> | null = null;
  private readonly workerPath: string;
  private readonly workerKind: WorkerKind;
  private readonly cancelGraceMs: number;
  private readonly onWorkerOutput: (line: string) => void;
  private nativeChecked: string | null | undefined;
  /** The slowest model step seen (a prefill chunk or a decode step): a cancel may wait for one. */
  private slowestStepMs = 0;
  /** Called when the worker exits unexpectedly or is replaced by the watchdog (for logs and the status bar). */
  onCrash?: (message: string) => void;
  /** Called when the GPU failed and the model moved to the CPU for the rest of the session (modelInfo.device says so). */
  onDeviceChange?: (report: DeviceReport) => void;

  constructor(opts: EngineClientOptions = {}) {
    this.workerPath = opts.workerPath ?? defaultWorkerPath();
    this.workerKind = opts.workerKind ?? 'process';
    // In the editor another extension may have loaded its own onnxruntime library into the extension host
    // (Windows reuses a loaded DLL by name), and a native crash would take every extension with it.
    if (this.workerKind === 'thread' && insideEditorHost()) throw new Error('inside the editor the inference worker runs only as a process');
    this.cancelGraceMs = opts.cancelGraceMs ?? 1500;
    this.onWorkerOutput = opts.onWorkerOutput ?? ((line) => process.stderr.write(`${line}\n`));
  }

  get modelInfo(): ModelInfo | null {
    return this.loaded?.info ?? null;
  }

  /** Loads (or switches to) a model; the worker frees the previous session. */
  load(modelDir: string, options: EngineOptions = {}): Promise<ModelInfo> {
    const unmet = this.nativeProblem();
    if (unmet) return Promise.reject(new EngineError(`the local engine cannot run on this machine: ${unmet}`, NATIVE_LOAD_ERROR));
    const p = this.request<Reply<'loaded'>>({ type: 'load', id: 0, modelDir, options }).then((r) => {
      this.loaded = { modelDir, options, info: r.info };
      return r.info;
    });
    this.loading = p;
    p.catch(() => undefined).finally(() => {
      if (this.loading === p) this.loading = null;
    });
    return p;
  }

  async generate(prompt: Prompt, options: Partial<DecodeOptions> = {}, hooks: GenerateHooks = {}): Promise<GenerateResult> {
    await this.ensureModel();
    const { signal, onText, onFirstLine, onStart, prefillChunk } = hooks;
    // Cancelled before it was sent: no work at all.
    if (signal?.aborted) return cancelledResult();
    const msg: ToWorker = { type: 'generate', id: 0, prompt, options, stream: !!(onText || onFirstLine), prefillChunk, notifyStart: !!onStart };
    try {
      return (await this.request<Reply<'done'>>(msg, { onText, onFirstLine, onStart }, signal)).result;
    } catch (err) {
      // The watchdog replaced a worker that ignored this request's cancel: for the caller it is cancelled.
      if (signal?.aborted && err instanceof EngineError && err.name === 'WorkerStuck') return cancelledResult();
      throw err;
    }
  }

  /** Generator.prefillAside, in the worker (shared/prefillAside.ts). */
  async prefillAside(prompt: Prompt, hooks: { signal?: AbortSignal } = {}): Promise<void> {
    await this.generate(prompt, PREFILL_ASIDE_OPTIONS, { signal: hooks.signal, prefillChunk: PREFILL_ASIDE_CHUNK });
  }

  async tokenize(text: string): Promise<number[]> {
    await this.ensureModel();
    return (await this.request<Reply<'tokens'>>({ type: 'tokenize', id: 0, text })).ids;
  }

  /** Memory and cache of the worker (RSS is the whole worker process when it runs as one). */
  async workerStats(): Promise<WorkerStats> {
    await this.ensureModel();
    return (await this.request<Reply<'stats'>>({ type: 'stats', id: 0 })).stats;
  }

  async resetCache(): Promise<void> {
    await this.ensureModel();
    await this.request<Reply<'ok'>>({ type: 'reset', id: 0 });
  }

  /**
   * Stops the worker: pending generations are cancelled, the worker frees its session between two
   * steps and exits. A worker that does not answer within `graceMs` is killed.
   */
  async dispose(graceMs = 2000): Promise<void> {
    const w = this.worker;
    if (!w) return;
    const bye = this.request<Reply<'ok'>>({ type: 'shutdown', id: 0 }).catch(() => undefined);
    const timeout = new Promise((r) => setTimeout(r, graceMs).unref());
    await Promise.race([bye, timeout]);
    this.worker = null;
    this.failAll(new EngineError('the engine was shut down', 'EngineDisposed'));
    await w.kill();
  }

  /** Kills the worker as a crash would (tests of recovery). */
  async killWorkerForTest(): Promise<void> {
    await this.worker?.kill();
  }

  /** What the package's dist/native.json says stands in the way on this machine (checked once, before any worker starts). */
  private nativeProblem(): string | null {
    if (this.nativeChecked === undefined) {
      const req = readNativeRequirements(path.dirname(this.workerPath));
      this.nativeChecked = req ? unmetRequirement(req, thisHost()) : null;
    }
    return this.nativeChecked;
  }

  private async ensureModel(): Promise<void> {
    if (this.loading) {
      await this.loading;
      return;
    }
    if (!this.loaded) throw new EngineError('no model loaded', 'NoModel');
    if (!this.worker) await this.load(this.loaded.modelDir, this.loaded.options);
  }

  private spawn(): WorkerHost {
    const w: WorkerHost = startWorker(this.workerKind, this.workerPath, {
      message: (msg) => this.onMessage(msg),
      exit: (reason) => this.onDeath(w, reason),
      output: (line) => this.onWorkerOutput(line),
    });
    return w;
  }

  private onDeath(w: WorkerHost, message: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.failAll(new EngineError(message, 'WorkerDied'));
    this.onCrash?.(message);
  }

  /** Kills a worker that did not answer a cancel in time; the next request starts a fresh one. */
  private replaceStuck(w: WorkerHost): void {
    if (this.worker !== w) return;
    this.worker = null;
    const message = `the inference worker did not stop within ${Math.round(this.watchdogMs)} ms of a cancel and was replaced`;
    this.failAll(new EngineError(message, 'WorkerStuck'));
    this.onCrash?.(message);
    void w.kill();
  }

  private failAll(err: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }

  private onMessage(msg: FromWorker): void {
    if (msg.type === 'device') {
      if (this.loaded) this.loaded.info = { ...this.loaded.info, device: msg.report };
      this.onDeviceChange?.(msg.report);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    if (msg.type === 'start') {
      p.onStart?.();
      return;
    }
    if (msg.type === 'partial') {
      p.onText?.(msg.text);
      return;
    }
    if (msg.type === 'line') {
      p.onFirstLine?.(msg.line);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.type === 'done') this.noteStepTime(msg.result.stats);
    if (msg.type === 'error') p.reject(new EngineError(msg.message, msg.name));
    else p.resolve(msg as never);
  }

  private noteStepTime(s: GenerationStats): void {
    const chunk = this.loaded?.options.prefillChunk ?? 128;
    const prefillStep = s.prefillTokens > 0 ? s.prefillMs / Math.ceil(s.prefillTokens / chunk) : 0;
    const decodeStep = s.generatedTokens > 0 ? s.decodeMs / s.generatedTokens : 0;
    this.slowestStepMs = Math.max(this.slowestStepMs, prefillStep, decodeStep);
  }

  /** A cancel waits for the step in progress: a large model's prefill chunk may take longer than the default. */
  private get watchdogMs(): number {
    return Math.max(this.cancelGraceMs, 3 * this.slowestStepMs);
  }

  private request<R extends FromWorker>(msg: ToWorker, streams: Pick<Pending, 'onText' | 'onFirstLine' | 'onStart'> = {}, signal?: AbortSignal): Promise<R> {
    if (!this.worker) this.worker = this.spawn();
    const worker = this.worker;
    const id = this.nextId++;
    let watchdog: NodeJS.Timeout | undefined;
    const cancel = () => {
      worker.post({ type: 'cancel', id });
      watchdog = setTimeout(() => {
        if (this.pending.has(id)) this.replaceStuck(worker);
      }, this.watchdogMs);
      watchdog.unref();
    };
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: never) => void, reject, ...streams });
      if (signal?.aborted) queueMicrotask(cancel);
      else signal?.addEventListener('abort', cancel, { once: true });
      worker.setBusy(true);
      worker.post({ ...msg, id } as ToWorker);
    }).finally(() => {
      clearTimeout(watchdog);
      signal?.removeEventListener('abort', cancel);
      if (this.pending.size === 0) worker.setBusy(false);
    });
  }
}

/** VS Code's extension host (desktop or code-server) sets one of these entry points in its environment. */
function insideEditorHost(): boolean {
  return process.env.VSCODE_ESM_ENTRYPOINT !== undefined || process.env.VSCODE_AMD_ENTRYPOINT !== undefined;
}

/** In the esbuild bundle the worker sits next to this code (dist/worker.js); compiled by tsc, in ../worker/. */
function defaultWorkerPath(): string {
  const bundled = path.join(__dirname, 'worker.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, '..', 'worker', 'worker.js');
}
