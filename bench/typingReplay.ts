import * as fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CompletionService } from '../src/completion/completionService';
import type { CompletionOutcome } from '../src/completion/types';
import { textSource } from '../src/completion/context/documentContext';
import { modelTraits } from '../src/completion/modelTraits';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { EngineClient } from '../src/engine/host/client';
import { type LengthTrace, type ModelEvent, TracingGenerator } from './replayTrace';
import { percentile, round } from './stats';
import { createRepoContext } from '../src/completion/context/repo/createRepoContext';
import { ContextChanges } from './context/contextChanges';
import { simulatedDefinitionsProvider } from './context/simulatedDefinitions';
import { WorkspaceFiles } from '../src/platform/workspaceFiles';
import { workerCpuSeconds } from './workerCpu';

/** The wait users feel: from a keystroke after which the typist pauses to the ghost text (or to nothing shown). */
export interface PauseLatency {
  pauses: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  under_300ms_share: number;
  /** Pauses that ended with a suggestion shown. */
  shown: number;
  /** The five longest waits and what they were made of (where the time goes). */
  slowest: {
    ms: number;
    service_ms: number;
    engine_ms: number;
    source: string;
    prompt_tokens: number;
    prefill_tokens: number;
    generated_tokens: number;
    prefill_ms: number;
    decode_ms: number;
    /** When its keystroke came (performance.now(); while the replay runs). */
    at?: number;
    /** The model's calls that ran during the wait (this request's among them), from the keystroke. */
    model_meanwhile?: string[];
    /** Keystrokes since the prompt's extra context last changed in this file (0: at this one; absent: never). */
    keys_since_context_change?: number;
  }[];
  /** Keystrokes typed over before their answer (not pauses): how many were answered anyway, how many cancelled. */
  typed_over: { completed: number; cancelled: number };
}

export interface ReplayCost {
  /** Worker and extension-host CPU time over the whole replay, per 100 keystrokes. */
  cpu_s_per_100_keys: number;
  worker_cpu_s: number;
  host_cpu_s: number;
  /** Every token the model generated, cancelled generations included. */
  generated_tokens: number;
  /** Tokens of cancelled generations plus those of finished ones that showed nothing. */
  wasted_tokens: number;
  /** Generations stopped at a first line the filters cut to nothing (CompletionService.stoppedAtFirstLine). */
  stopped_at_first_line: number;
  model_calls: number;
  /** Prefills of the line below while the typist reads (Generator.prefillAside), not in model_calls. */
  warm_ups: number;
}

export interface TypingReplayResult {
  files: number;
  keystrokes: number;
  pause: PauseLatency;
  cost: ReplayCost;
  /** The lengths each request had (a real model's run: replayed on random-weight shapes). */
  lengths: LengthTrace;
  completed: number;
  cancelled: number;
  /** Requests that completed (survivors only: see `pause` for the wait users feel). */
  latency_ms: { p50: number; p95: number; p99: number };
  model_latency_ms: { p50: number; p95: number };
  by_source: Record<string, number>;
  median_prefill_fraction: number;
  median_prefill_tokens: number;
  median_prompt_tokens: number;
  /** Tokens prefilled per model request, on average (the KV cache's reuse: a few per keystroke when it works). */
  mean_prefill_tokens: number;
  /**
   * Model calls that prefilled 64 tokens or more, typed-over ones included (a request typed over during its prefill
   * goes on when the next keystroke shares its prompt): where the cache was lost (the context or the window changed).
   */
  long_prefills: number;
  /** Repository context (opts.context): background gathers and their time; what the pipeline spends per answer. */
  context: {
    gathers?: number;
    gather_p50_ms?: number;
    gather_p95_ms?: number;
    timeouts?: number;
    failures?: number;
    median_context_chars?: number;
    /** Keystrokes whose extra context differed from the last keystroke's in the file, by the first changed chunk's source. */
    changes?: number;
    changes_by_source?: Record<string, number>;
    changes_sent_cold?: number;
    changes_read_in_pauses?: number;
    host_ms_p50: number;
  };
  event_loop_p99_lag_ms: number;
  host_rss_mb: number;
  worker_rss_mb: number;
}

/**
 * Types real files character by character at a human rhythm through the editor's pipeline
 * (CompletionService -> worker client -> engine in its own process), as the VS Code provider drives it:
 * each keystroke cancels the previous request and asks again; at the end of a line and after some words the
 * typist pauses and waits for the answer. `pause` is the wait from each such keystroke to the ghost text (or
 * to nothing shown), over every pause; `latency_ms` counts only the requests that completed. The event loop
 * of this (the "extension host") thread is watched the whole time. No debounce is simulated: the editor's
 * adaptive debounce (15-250 ms) comes on top of the pause numbers.
 */
export async function typingReplay(
  workerPath: string,
  modelDir: string,
  files: string[],
  opts: {
    threads: number;
    charsPerFile: number;
    gapMs: number;
    /**
     * The shortest pause: the key after a pause comes this long after the pause's keystroke at the earliest
     * (issue 24 counts a pause when the next key is 500 ms or more later), and never sooner than `gapMs` after
     * the answer. Without it the next key comes `gapMs` after the answer.
     */
    pauseMs?: number;
    fixedNewTokens?: number;
    speculativeTokens?: number;
    /** The inline preset's partialLineMs (default: the product's). */
    partialLineMs?: number;
    prefetch?: boolean;
    /** A real model's lengths per request (from an earlier run's `lengths`): each request writes exactly that many tokens. */
    lengths?: LengthTrace;
    /**
     * Repository context on: the workspace it is gathered from, and each replayed file's path in it. It is
     * gathered after every keystroke in the background (as the editor's events do), never awaited by a request.
     */
    context?: {
      root: string;
      pathOf: (file: string) => string;
      /** A stand-in for the editor's language-server definitions source (context/simulatedDefinitions.ts). */
      definitions?: { keep: boolean };
    };
  },
): Promise<TypingReplayResult> {
  const client = new EngineClient({ workerPath });
  const info = await client.load(modelDir, { threads: opts.threads });
  const template = pickFimTemplate(info.specialTokens);
  const settings = defaultCompletionSettings();
  // Random-weight models never end a line: they get a fixed suggestion length (a typical one-line completion).
  if (opts.fixedNewTokens) settings.preset = { ...settings.preset, maxNewTokens: opts.fixedNewTokens };
  if (opts.prefetch !== undefined) settings.prefetch = opts.prefetch;
  if (opts.speculativeTokens !== undefined) settings.preset = { ...settings.preset, speculativeTokens: opts.speculativeTokens };
  if (opts.partialLineMs !== undefined) settings.preset = { ...settings.preset, partialLineMs: opts.partialLineMs };
  const traits = modelTraits(info);
  const syntax = new SyntaxRefiner();
  for (const f of files) await syntax.ready(languageOf(f));
  const generator = new TracingGenerator(client, opts.lengths ?? null);
  const workerPid = (await client.workerStats()).pid;
  const cpu0 = { host: process.cpuUsage(), worker: workerCpuSeconds(workerPid) };
  const workspace = opts.context ? new WorkspaceFiles(opts.context.root) : undefined;
  const definitions = opts.context?.definitions;
  const repo =
    workspace && opts.context
      ? createRepoContext({
          files: workspace,
          enabled: (s) => s !== 'definitions' || definitions !== undefined,
          more: definitions ? [simulatedDefinitionsProvider(workspace, definitions.keep)] : [],
        }).context
      : undefined;
  const pathOf = (file: string) => opts.context?.pathOf(file) ?? file;
  const service = new CompletionService(
    generator,
    () => template,
    () => settings,
    // As in the editor: the model's calibration (the gate) and tree-sitter behind the filters.
    () => traits,
    syntax,
    { repo },
  );
  const gathering: Promise<void>[] = [];
  const gather = (file: string, text: string, line: number) => {
    if (repo) gathering.push(repo.refresh({ path: pathOf(file), languageId: languageOf(file), length: text.length, text: () => text, line }));
  };
  const contextChars: number[] = [];
  const contextChanges = new ContextChanges();
  let lastContextChange: number | undefined;
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const outcomes: CompletionOutcome[] = [];
  const pauseWaits: number[] = [];
  const pauseDetails: PauseLatency['slowest'] = [];
  let pausesShown = 0;
  let keystrokes = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    // Type a stretch of lines from the middle of the file, with the rest of the file below the cursor.
    const lines = text.split('\n');
    const start = Math.floor(lines.length / 3);
    const typedLines: string[] = [];
    for (let n = 0, i = start; i < lines.length && n < opts.charsPerFile; i++) {
      typedLines.push(lines[i]);
      n += lines[i].length + 1;
    }
    const before = lines.slice(0, start);
    const after = lines.slice(start + typedLines.length);
    // Opening the file: Ghostline gathers its context and warms the cache at the cursor (as the extension does on
    // load and focus).
    generator.key = `${file}#open`;
    const opened = [...before, ...after].join('\n');
    gather(file, opened, before.length);
    await Promise.all(gathering);
    const openRequest = {
      doc: textSource(opened),
      cursor: { line: before.length, character: 0 },
      languageId: languageOf(file),
      path: pathOf(file),
      explicit: false,
    };
    contextChanges.reset();
    lastContextChange = undefined;
    const openAnswer = service.complete(openRequest);
    if (repo) contextChanges.note(service.lastContext(openRequest.path) ?? []);
    await openAnswer;
    const pending: Promise<void>[] = [];
    let current: AbortController | null = null;
    for (let li = 0; li < typedLines.length; li++) {
      const line = typedLines[li];
      for (let c = 1; c <= line.length; c++) {
        const docLines = [...before, ...typedLines.slice(0, li), line.slice(0, c), ...after];
        // The editor's events gather after the keystroke, in the background: the request below does not wait.
        gather(file, docLines.join('\n'), before.length + li);
        current?.abort();
        const ac = new AbortController();
        current = ac;
        keystrokes++;
        generator.key = `${file}#${keystrokes}`;
        const req = {
          doc: textSource(docLines.join('\n')),
          cursor: { line: before.length + li, character: c },
          languageId: languageOf(file),
          path: pathOf(file),
          explicit: false,
        };
        const typedAt = performance.now();
        const request = service.complete(req, ac.signal).then((o) => {
          outcomes.push(o);
          if (o.source === 'model' && o.stats && repo) contextChars.push(contextCharsOf(service, pathOf(file), docLines, before.length + li, c));
          return o;
        });
        // The context this keystroke's prompt holds (complete() prepares it before it first waits).
        if (repo && contextChanges.note(service.lastContext(req.path) ?? [])) lastContextChange = keystrokes;
        const sinceChange = lastContextChange === undefined ? undefined : keystrokes - lastContextChange;
        // People pause at the end of a line and now and then after a word: there the typist waits for the
        // answer, however long it takes, and every such wait counts (cache hits as they are). Elsewhere the next
        // keystroke comes after the usual gap and cancels the request if it is still running.
        const pause = c === line.length || (line[c - 1] === ' ' && pseudoRandom(keystrokes * 7) < 0.3);
        if (pause) {
          const answer = await request;
          const waited = performance.now() - typedAt;
          pauseWaits.push(waited);
          const st = answer.stats;
          pauseDetails.push({
            ms: round(waited),
            at: typedAt,
            // The pipeline's own time for this request, and the engine's (tokenize, prefill, decode): what is
            // left of `ms` was spent waiting for the worker to finish or drop earlier work.
            service_ms: round(answer.latencyMs),
            engine_ms: round(st?.totalMs ?? 0),
            source: answer.source,
            prompt_tokens: st?.promptTokens ?? 0,
            prefill_tokens: st?.prefillTokens ?? 0,
            generated_tokens: st?.generatedTokens ?? 0,
            prefill_ms: round(st?.prefillMs ?? 0),
            decode_ms: round(st?.decodeMs ?? 0),
            keys_since_context_change: sinceChange,
          });
          if (answer.items.length > 0) pausesShown++;
          // The typist reads the suggestion for a moment; what the pipeline starts when idle runs meanwhile.
          await sleep(Math.max(opts.gapMs, (opts.pauseMs ?? 0) - waited));
        } else {
          pending.push(request.then(() => undefined));
          await sleep(opts.gapMs * (0.6 + 0.8 * pseudoRandom(keystrokes)));
        }
      }
    }
    current?.abort();
    await Promise.all(pending);
  }
  await service.idle();
  await Promise.all(gathering);
  lag.disable();
  const worker = await client.workerStats();
  const hostCpu = process.cpuUsage(cpu0.host);
  const workerCpu = workerCpuSeconds(workerPid) - cpu0.worker;
  await client.dispose();

  const done = outcomes.filter((o) => !o.cancelled);
  const model = done.filter((o) => o.source === 'model' && o.stats);
  const fractions = model.map((o) => o.stats!.prefillTokens / o.stats!.promptTokens);
  const bySource: Record<string, number> = {};
  for (const o of outcomes) bySource[o.cancelled ? 'cancelled' : o.source] = (bySource[o.cancelled ? 'cancelled' : o.source] ?? 0) + 1;
  const lat = done.map((o) => o.latencyMs);
  const hostCpuS = (hostCpu.user + hostCpu.system) / 1e6;
  const typedOver = outcomes.length - pauseWaits.length;
  const cancelledOver = outcomes.filter((o) => o.cancelled).length;
  const shownNothing = outcomes.filter((o) => !o.cancelled && o.source === 'model' && o.items.length === 0);
  return {
    files: files.length,
    keystrokes,
    pause: {
      pauses: pauseWaits.length,
      p50_ms: round(percentile(pauseWaits, 50)),
      p90_ms: round(percentile(pauseWaits, 90)),
      p99_ms: round(percentile(pauseWaits, 99)),
      under_300ms_share: round(pauseWaits.filter((w) => w < 300).length / Math.max(1, pauseWaits.length), 3),
      shown: pausesShown,
      slowest: pauseDetails
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map(({ at, ...p }) => ({ ...p, model_meanwhile: meanwhile(generator.events, at ?? 0, at === undefined ? 0 : at + p.ms) })),
      typed_over: { completed: typedOver - cancelledOver, cancelled: cancelledOver },
    },
    cost: {
      cpu_s_per_100_keys: round(((hostCpuS + workerCpu) * 100) / Math.max(1, keystrokes), 2),
      worker_cpu_s: round(workerCpu, 2),
      host_cpu_s: round(hostCpuS, 2),
      generated_tokens: generator.generated,
      wasted_tokens: generator.cancelledTokens + shownNothing.reduce((n, o) => n + (o.stats?.generatedTokens ?? 0), 0),
      stopped_at_first_line: service.stoppedAtFirstLine,
      model_calls: generator.calls,
      warm_ups: generator.warmUps,
    },
    lengths: generator.recorded,
    completed: done.length,
    cancelled: outcomes.length - done.length,
    latency_ms: { p50: round(percentile(lat, 50)), p95: round(percentile(lat, 95)), p99: round(percentile(lat, 99)) },
    model_latency_ms: {
      p50: round(
        percentile(
          model.map((o) => o.latencyMs),
          50,
        ),
      ),
      p95: round(
        percentile(
          model.map((o) => o.latencyMs),
          95,
        ),
      ),
    },
    by_source: bySource,
    median_prefill_fraction: round(percentile(fractions, 50), 4),
    median_prefill_tokens: percentile(
      model.map((o) => o.stats!.prefillTokens),
      50,
    ),
    median_prompt_tokens: percentile(
      model.map((o) => o.stats!.promptTokens),
      50,
    ),
    mean_prefill_tokens: round(model.reduce((n, o) => n + o.stats!.prefillTokens, 0) / Math.max(1, model.length), 1),
    long_prefills: generator.events.filter((e) => (e.prefillTokens ?? 0) >= 64).length,
    event_loop_p99_lag_ms: round(lag.percentile(99) / 1e6),
    host_rss_mb: Math.round(process.memoryUsage().rss / 1e6),
    worker_rss_mb: Math.round(worker.rssBytes / 1e6),
    context: repo
      ? {
          gathers: repo.stats.gathers,
          gather_p50_ms: round(percentile(repo.stats.durationsMs, 50)),
          gather_p95_ms: round(percentile(repo.stats.durationsMs, 95)),
          timeouts: repo.stats.timeouts,
          failures: repo.stats.failures,
          median_context_chars: percentile(contextChars, 50),
          changes: contextChanges.changes,
          changes_by_source: contextChanges.bySource,
          // Of those, the ones a keystroke sent cold (the model read the file's window again in the pause) and the ones
          // read while the typist paused (deferredContext.ts), the keystroke after them sending them warm.
          changes_sent_cold: service.contextChangesSent,
          changes_read_in_pauses: service.contextChangesWarmed,
          // The pipeline's own time per answer (its latency less the engine's): what reading the gathered context adds.
          host_ms_p50: round(
            percentile(
              model.map((o) => o.latencyMs - (o.stats?.totalMs ?? 0)),
              50,
            ),
          ),
        }
      : {
          host_ms_p50: round(
            percentile(
              model.map((o) => o.latencyMs - (o.stats?.totalMs ?? 0)),
              50,
            ),
          ),
        },
  };
}

/** The model's calls that ran during [from, to] (ms from the pause's keystroke): what a slow pause waited behind. */
function meanwhile(events: readonly ModelEvent[], from: number, to: number): string[] {
  return events
    .filter((e) => e.start < to && (Number.isNaN(e.end) || e.end > from))
    .map(
      (e) =>
        `${e.kind} ${round(e.start - from)}..${Number.isNaN(e.end) ? '?' : round(e.end - from)} ms${e.promptTokens === undefined ? '' : `, ${e.prefillTokens} of ${e.promptTokens} tokens prefilled in ${round(e.prefillMs ?? 0)} ms`}${e.finish ? `, ${e.finish}` : ''}`,
    );
}

/** Characters of extra context in the prompt the service builds for this keystroke now. */
function contextCharsOf(service: CompletionService, path: string, docLines: string[], line: number, character: number): number {
  const { extra } = service.promptFor({
    doc: textSource(docLines.join('\n')),
    cursor: { line, character },
    languageId: languageOf(path),
    path,
    explicit: false,
  });
  return extra.reduce((n, c) => n + c.text.length, 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Deterministic jitter so runs are comparable. */
const pseudoRandom = (i: number) => (((Math.sin(i * 12.9898) * 43758.5453) % 1) + 1) % 1;

/** The VS Code language id of a replayed file, by its extension. */
/** The language of a replayed file, named by its extension (a frozen copy ends in `.txt` after it). */
function languageOf(file: string): string {
  const name = file.replace(/\.txt$/, '');
  if (/\.[cm]?js$/.test(name)) return 'javascript';
  if (/\.py$/.test(name)) return 'python';
  return 'typescript';
}
