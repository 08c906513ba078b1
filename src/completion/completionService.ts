import { promptText, type Prompt } from '../engine/shared/prompt';
import type { FirstLine, GenerateResult } from '../engine/shared/types';
import { CompletionCache } from './cache/completionCache';
import { contextHash } from './cache/contextKey';
import { ChunkRing } from './context/chunkRing';
import { documentContext } from './context/documentContext';
import { DeferredContext, sameContext } from './context/deferredContext';
import { FilePromptMemory } from './context/filePromptMemory';
import { fitBudget } from './context/fitBudget';
import { type ContextSupply, extraContext } from './context/repo/extraContext';
import type { Generator } from './generator';
import { Prefetcher } from './prefetcher';
import { IdleWarmer } from './idleWarmer';
import { InFlight } from './inflight';
import type { SelectionInputs } from './selection/generateForSelection';
import { type GeneratePreset, inlineDecodeOptions, inlineMode, type InlineMode } from './presets';
import { buildPrompt, promptHeadMoves } from './prompt/buildPrompt';
import type { FimTemplate } from './prompt/fimTemplates';
import { dropsEveryAnswerFrom } from './filters/pipeline';
import type { SyntaxRefiner } from './syntax/syntaxRefiner';
import { insertAt } from './textOverlay';
import { untilAborted } from './untilAborted';
import type { CompletionOutcome, CompletionRequest, CompletionSettings, DocumentContext, ExtraChunk, ModelTraits, ScoredItems } from './types';
import { gate, placeOf, scoredSuggestion, suggestionText } from './suggestionStages';

const NOTHING: ScoredItems = Object.freeze({ items: [], confidence: null }) as ScoredItems;
/** What waiting on an in-flight generation gives when its text stopped agreeing with what was typed. */
const DIVERGED: unique symbol = Symbol('diverged');

/** How long an abandoned generation may run on, waiting for the next keystroke to pick it up. */
export const REUSE_GRACE_MS = 300;

/**
 * The inline-completion pipeline, editor-agnostic: context windows -> cache -> in-flight reuse -> prompt ->
 * model -> filters -> cache. The VS Code provider and `serve-stdio` both drive this class.
 */
export interface ServiceExtras {
  /** Extra context from other files; pass one ring to services that replace each other, so none starts empty. */
  ring?: ChunkRing;
  /** Repository context gathered ahead of time (RepoContext): read when a prompt is built, never awaited. */
  repo?: ContextSupply['repo'];
  /** The clock of latencyMs (tests). */
  now?: () => number;
}

export class CompletionService {
  readonly ring: ChunkRing;
  readonly repo: ContextSupply['repo'];
  private readonly now: () => number;
  readonly cache = new CompletionCache();
  private inflight: InFlight | null = null;
  private readonly prefetch = new Prefetcher();
  /** The warm-up in idle time (scheduleWarmUp), aborted by the next model request. */
  private readonly warmer: IdleWarmer;
  /** When a file's changed extra context reaches the model: once warm (deferredContext.ts). */
  private readonly deferred = new DeferredContext();
  /** Set by close(): a retired backend's service sends nothing more (no request, no prefetch). */
  private closed = false;
  /** Per file: the last window start and the characters per token (so the next prompt reuses the cache and fits). */
  private readonly files: FilePromptMemory;
  /** Generations stopped at their first line because the filters would drop the whole answer (benchmarks read it). */
  stoppedAtFirstLine = 0;
  /** First lines kept on screen because the gate would hold their whole answer back (keepShown). */
  keptShownLines = 0;
  /** Requests that sent a file a context other than its last: the model read the file's window again (benchmarks). */
  contextChangesSent = 0;
  /** Changed contexts the warm-up read while the user paused, which requests then sent warm (benchmarks). */
  contextChangesWarmed = 0;

  constructor(
    private readonly generator: Generator,
    private readonly template: () => FimTemplate | null,
    private readonly settings: () => CompletionSettings,
    private readonly model: () => ModelTraits = () => ({ contextTokens: Infinity }),
    /** Syntax-aware cuts and parse-error drops (tree-sitter); none: the indentation filters alone. */
    private readonly syntax: SyntaxRefiner | null = null,
    extras: ServiceExtras = {},
  ) {
    this.ring = extras.ring ?? new ChunkRing();
    this.repo = extras.repo;
    this.now = extras.now ?? (() => performance.now());
    this.files = new FilePromptMemory(() => this.model().charsPerToken);
    this.warmer = new IdleWarmer(generator.prefillAside?.bind(generator));
  }

  /**
   * The same pipeline over the same generator, model and syntax, with settings changed (calibration runs
   * every suggestion past the gate): its own caches, so nothing it computes reaches the editor's.
   */
  withSettings(change: Partial<CompletionSettings>): CompletionService {
    return new CompletionService(this.generator, this.template, () => ({ ...this.settings(), ...change }), this.model, this.syntax, {
      ring: this.ring,
      repo: this.repo,
      now: this.now,
    });
  }

  /** The prompt format in use (the FIM family), or null for plain prompts. */
  templateFamily(): string | null {
    return this.template()?.family ?? null;
  }

  /** The model's traits in use now (its calibration included) and the settings of the active document. */
  get traits(): ModelTraits {
    return this.model();
  }

  get currentSettings(): CompletionSettings {
    return this.settings();
  }

  /**
   * The prompt this request would send now, and the extra context in it with its sources (Show Prompt,
   * `ghostline prompt`, the context evaluation): the same preparation as complete(), without asking the model.
   * `asRequest`: the next prompt in the file builds on this one as on a request's (benches that walk a file). The
   * context is the current one, also while requests still send the last one until it is warm (deferredContext.ts).
   */
  promptFor(req: CompletionRequest, opts: { asRequest?: boolean } = {}): { prompt: Prompt; extra: ExtraChunk[] } {
    const { ctx, extra, template } = this.prepare(req, { current: true });
    if (opts.asRequest) this.remember(req.path, ctx, extra);
    return { prompt: modelInput(req, ctx, extra, template).built.prompt, extra };
  }

  /** The extra context the file's last request sent (or its warm-up read): what the KV cache holds (benchmarks). */
  lastContext(path: string): readonly ExtraChunk[] | undefined {
    return this.files.shownContext(path);
  }

  /** What the next prompt in the file keeps for its KV cache: where its window starts, and its extra context. */
  private remember(path: string, ctx: { prefixStartLine: number }, extra: readonly ExtraChunk[]): void {
    this.files.rememberWindowStart(path, ctx.prefixStartLine);
    this.files.rememberContext(path, extra);
  }

  /** A suggestion from the cache alone (no model call, no waiting), or null. */
  peek(req: CompletionRequest): CompletionOutcome | null {
    const t0 = this.now();
    const { ctx, mode, hash } = this.prepare(req);
    const cached = this.cache.get(hash, ctx.linePrefix);
    if (!cached) return null;
    return { ...this.gate(cached.items, cached.confidence, req.explicit), raw: null, source: 'cache', cancelled: false, mode, latencyMs: this.now() - t0 };
  }

  /** The confidence gate (suggestionStages.ts) with this model's calibration and the settings' bar. */
  private gate(items: string[], confidence: number | null, explicit: boolean): { items: string[]; confidence: number | null; gated: boolean } {
    return gate({ items, confidence }, this.model().calibration, this.settings().minConfidence, explicit);
  }

  /**
   * The request's window, template and extra context. A request sends the file's last context while a changed one
   * waits to be warmed (deferredContext.ts; `deferred`); `current` takes the changed one at once.
   */
  private prepare(req: CompletionRequest, opts: { current?: boolean } = {}) {
    const s = this.settings();
    const template = this.template();
    const model = this.model();
    // The context's share stays reserved even when less was found: the share is also the slack that keeps a prompt
    // inside the model's window where characters per token run below the estimate (a server refuses an overflow;
    // measured: given back, prompts of the bundled model's eval positions reached 529 of 512 tokens).
    const fit = fitBudget(s.budget, s.extraContextChars, model.contextTokens, s.preset.maxNewTokens, this.files.charsPerToken(req.path), s.context.maxShare);
    const ctx = documentContext(req.doc, req.cursor, fit.budget, this.files.windowStart(req.path));
    const last = this.files.shownContext(req.path);
    const fresh = extraContext({ ring: this.ring, repo: this.repo }, fit.extraChars, req.path, ctx, (source) => s.context.sources[source], last);
    // Only a backend that keeps a second cache can warm the changed context while the user reads.
    const contextSettings = JSON.stringify([s.extraContextChars, s.context.sources]);
    const { extra, deferred } =
      opts.current || !this.warmer.available ? { extra: fresh, deferred: false } : this.deferred.choose(req.path, fresh, last, this.now(), contextSettings);
    this.syntax?.prepare(req.languageId);
    const mode = inlineMode(ctx.linePrefix, ctx.lineSuffix);
    const hash = contextHash({
      path: req.path,
      prefix: ctx.prefix,
      lineSuffix: ctx.lineSuffix,
      suffix: ctx.suffix,
      extra: extra.map((c) => c.path + c.text).join('\0'),
    });
    return { s, template, ctx, mode, extra, hash, last, deferred, contextSettings };
  }

  async complete(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionOutcome> {
    const t0 = this.now();
    const { s, template, ctx, mode, extra, hash, last, deferred, contextSettings } = this.prepare(req);
    this.deferred.sent(req.path, deferred, this.now(), contextSettings);
    if (last && !sameContext(extra, last)) this.contextChangesSent++;
    this.remember(req.path, ctx, extra);
    const done = (o: Omit<CompletionOutcome, 'latencyMs' | 'mode' | 'gated'>): CompletionOutcome => {
      if (!o.cancelled && !req.explicit && (deferred || !this.prefetch.busy)) this.scheduleWarmUp(req, ctx, deferred);
      return { ...o, ...this.gate(o.items, o.confidence, req.explicit), mode, latencyMs: this.now() - t0 };
    };

    const wantAlternatives = req.explicit && s.alternatives > 1;
    const cached = this.cache.get(hash, ctx.linePrefix);
    if (cached && (!wantAlternatives || cached.items.length > 1))
      return done({ items: cached.items, confidence: cached.confidence, raw: null, source: 'cache', cancelled: false });

    const running = this.inflight;
    if (running && !wantAlternatives && running.compatible(hash, ctx.linePrefix)) {
      running.attach(signal);
      const typed = ctx.linePrefix.slice(running.linePrefix.length);
      const restOf = (x: ScoredItems) => x.items.filter((t) => t.startsWith(typed) && t.length > typed.length).map((t) => t.slice(typed.length));
      // Wait while what the model writes agrees with what was typed. Once it disagrees nothing it writes can
      // serve this keystroke, so the model is asked afresh at once rather than after the whole generation
      // (measured: about 300 ms of a pause went to waiting out such generations).
      const whole = Promise.race<ScoredItems | typeof DIVERGED>([running.promise.catch(() => NOTHING), running.diverges(typed).then(() => DIVERGED)]);
      // A block's first line, once written, serves this keystroke as it served the one that started it.
      const first = await untilAborted(Promise.race([whole.then(() => null), running.early]), signal, null);
      if (first && !req.explicit) {
        const rest = restOf(first);
        if (rest.length > 0 && this.gate(rest, first.confidence, false).items.length > 0)
          return done({
            items: rest,
            confidence: first.confidence,
            raw: running.streamed,
            source: 'inflight',
            cancelled: false,
            fuller: running.promise.then((x) => x !== NOTHING).catch(() => false),
          });
      }
      const scored = await untilAborted(whole, signal, NOTHING);
      if (scored !== DIVERGED) {
        const rest = restOf(scored);
        // Typing what the model predicted keeps its confidence (the rest is the same tokens).
        if (rest.length > 0) return done({ items: rest, confidence: scored.confidence, raw: running.streamed, source: 'inflight', cancelled: false });
        if (signal?.aborted) return done({ items: [], confidence: null, raw: null, source: 'none', cancelled: true });
        // The model wrote past what was typed and the filters kept nothing: asked again here it would write the
        // same (a low temperature), so the answer is nothing, now.
        if (running.streamed.length > typed.length && running.streamed.startsWith(typed) && scored !== NOTHING)
          return done({ items: [], confidence: null, raw: running.streamed, source: 'inflight', cancelled: false });
      }
    }
    if (signal?.aborted || this.closed) return done({ items: [], confidence: null, raw: null, source: 'none', cancelled: true });

    const result = await this.runModel(req, ctx, hash, mode, extra, template, wantAlternatives ? s.alternatives : 1, signal);
    // Prefetch only after a suggestion the user sees: one the gate holds back will not be accepted.
    const shown = this.gate(result.items, result.confidence, req.explicit).items;
    // Not after a block's first line: the block is still being written, and a prefetch would cut it off.
    if (shown.length > 0 && s.prefetch && !req.explicit && !result.fuller) this.prefetchAfter(req, shown[0]);
    return done(result);
  }

  /**
   * Puts the prompt complete() would send for this request into the backend's cache without generating (a
   * server's warm-up). False when the backend has no such request: the caller completes instead.
   */
  async prefill(req: CompletionRequest, signal?: AbortSignal): Promise<boolean> {
    if (this.closed) return true; // a retired backend warms nothing, and nothing else should try
    if (!this.generator.prefill) return false;
    const { template, ctx, extra } = this.prepare(req);
    this.remember(req.path, ctx, extra);
    const { built, infill } = modelInput(req, ctx, extra, template);
    await this.generator.prefill(built.prompt, { signal, infill });
    return true;
  }

  /** Runs the model for a context, as the new in-flight generation (aborting one for another context). */
  private async runModel(
    req: CompletionRequest,
    ctx: DocumentContext,
    hash: string,
    mode: InlineMode,
    extra: ExtraChunk[],
    template: FimTemplate | null,
    alternatives: number,
    signal?: AbortSignal,
  ): Promise<Omit<CompletionOutcome, 'latencyMs' | 'mode' | 'gated'>> {
    const s = this.settings();
    const { built, infill } = modelInput(req, ctx, extra, template);
    const options = inlineDecodeOptions(s.preset, mode, ctx.linePrefix);
    if (alternatives > 1) Object.assign(options, { numBeams: alternatives, numReturnSequences: alternatives });
    if (template) options.stop = [...(options.stop ?? []), ...template.stopTokens];

    this.inflight?.abort();
    this.warmer.abort();
    const job = new InFlight(hash, ctx.linePrefix, REUSE_GRACE_MS);
    this.inflight = job;
    job.attach(signal);
    const place = placeOf(req, ctx, this.syntax ?? null);
    // A block's first line is shown as soon as it is written, and any first line still being written after
    // partialLineMs as far as it got; the rest goes on into the cache (see below). A one-line answer's complete
    // line is its end, so only a partial one comes early.
    const early = alternatives === 1 && (mode === 'block' || (options.partialLineMs ?? 0) > 0);
    let firstLine: (line: FirstLine) => void = () => undefined;
    const firstLineWritten = new Promise<FirstLine>((resolve) => (firstLine = resolve));
    const generation = this.generator.generate(built.prompt, options, {
      signal: job.controller.signal,
      onText: (d) => job.append(d),
      onFirstLine: early ? (line) => (mode === 'block' || line.partial) && firstLine(line) : undefined,
      infill,
    });
    const calibration = this.model().calibration;
    job.promise = generation.then((r) => {
      if (r.finishReason === 'cancelled') return NOTHING;
      const processed = r.sequences.map((q) => suggestionText(q.text, q.finishReason, place));
      const best = processed.findIndex((t) => t !== null);
      const items = distinct(processed);
      if (best < 0) return { items, confidence: null };
      return { ...scoredSuggestion(r.sequences[best], processed[best], place, calibration), items };
    });
    // The first line as a suggestion of its own: through the same stages as a one-line answer the model ended
    // there. A partial one as a line cut off by the time budget, and without the syntax check: a line still
    // being written cannot parse yet (an open string, an operator waiting for its operand); the whole line is
    // checked when it is written, before the refresh shows it.
    job.early = firstLineWritten.then((line) => {
      const finishReason = line.partial ? 'time' : 'stop';
      const stages = line.partial ? { ...place, syntax: null } : place;
      return scoredSuggestion({ ...line, finishReason, logprob: Number.NaN, tokens: [] }, suggestionText(line.text, finishReason, stages), place, calibration);
    });
    // The result is cached when the generation ends, even after this caller has gone: the next keystroke
    // (which may have attached to it) or a return to this place then costs nothing.
    const settled = Promise.all([generation, job.promise])
      .then(([r, scored]) => {
        if (r.finishReason !== 'cancelled') this.cache.set(hash, ctx.linePrefix, scored);
        const chars = ctx.prefix.length + ctx.linePrefix.length + ctx.lineSuffix.length + ctx.suffix.length + extra.reduce((n, c) => n + c.text.length, 0);
        if (r.stats.truncatedTokens === 0) this.files.observe(req.path, chars, r.stats.promptTokens);
        return { r, scored };
      })
      .finally(() => {
        job.settle();
        if (this.inflight === job) this.inflight = null;
      });
    // A block's first line (or a partial first line), when the gate would show it, is the answer now: the user
    // sees it while the rest is written, and the whole answer, cached when it ends, is what the next request
    // here gets (`fuller` says when).
    if (early) {
      const first = await untilAborted(Promise.race([settled.then(() => null), job.early]), signal, null);
      if (first && this.gate(first.items, first.confidence, req.explicit).items.length > 0) {
        const fuller = settled.then(({ r, scored }) => this.keepShown(r, scored, first, hash, ctx.linePrefix)).catch(() => false);
        return { ...first, raw: job.streamed, source: 'model', prompt: promptText(built.prompt), cancelled: false, fuller };
      }
      // A first line the gate holds back is the answer too: the whole answer would start with that same text,
      // so it is not waited for (seconds on a CPU) and the generation stops. Remembered here as held back.
      if (first && first.items.length > 0 && first.confidence !== null && !req.explicit && !signal?.aborted) {
        job.abort();
        this.cache.set(hash, ctx.linePrefix, first);
        return { ...first, raw: job.streamed, source: 'model', prompt: promptText(built.prompt), cancelled: false };
      }
      // A first line the filters cut to nothing, as they would cut any answer it begins (a `}` that closes the
      // block the cursor is in): nothing will be shown, so the user is told so now, not when the model has
      // written the lines after it, and the model is free for the next keystroke.
      if (first && first.items.length === 0 && !signal?.aborted) {
        const line = await firstLineWritten;
        if (!line.partial && dropsEveryAnswerFrom(line.text, { ...place.filters, finishReason: 'stop' })) {
          job.abort();
          this.stoppedAtFirstLine++;
          return { items: [], confidence: null, raw: job.streamed, source: 'model', prompt: promptText(built.prompt), cancelled: false };
        }
      }
    }
    // A cancelled caller is released at once; the generation runs on for the grace period in case the next
    // keystroke can use it.
    const out = await untilAborted(settled, signal, null);
    if (!out) return { items: [], confidence: null, raw: null, source: 'none', cancelled: true };
    const { r, scored } = out;
    const room = this.model().contextTokens - (options.maxNewTokens ?? 0);
    return {
      ...scored,
      raw: r.text,
      source: 'model',
      stats: r.stats,
      fill: Number.isFinite(room) && room > 0 ? r.stats.promptTokens / room : undefined,
      prompt: promptText(built.prompt),
      cancelled: r.finishReason === 'cancelled',
    };
  }

  /**
   * Whether a whole answer replaces the first line already shown (the refresh then shows it). Not when the gate
   * would hold the whole answer back: the line on screen stays (it passed the gate on its own tokens), and is
   * what this place answers from now on, since ghost text that vanishes at the refresh reads as a glitch.
   */
  private keepShown(r: GenerateResult, whole: ScoredItems, shown: ScoredItems, hash: string, linePrefix: string): boolean {
    if (r.finishReason === 'cancelled') return false;
    if (whole.items.length === 0 || this.gate(whole.items, whole.confidence, false).items.length > 0) return true;
    this.cache.set(hash, linePrefix, shown);
    this.keptShownLines++;
    return false;
  }

  /** Computes, when idle, the suggestion that would follow `accepted` (llama.vscode's speculative prefetch). */
  private prefetchAfter(req: CompletionRequest, accepted: string): void {
    if (this.closed || this.prefetch.busy) return;
    const next = insertAt(req.doc, req.cursor, accepted);
    // No signal: it runs until done (bounded by the preset) unless a request for another context needs the model.
    this.prefetch.start(() => this.complete({ ...req, doc: next.doc, cursor: next.cursor, explicit: false }));
  }

  /**
   * While the user reads (idleWarmer.ts), prefilled beside the prompt in use: the file's changed context, when the
   * request kept the last one (`deferred`), which requests take once it is warm; else, at the end of a line, the
   * prompt of the line below, after Enter, where Enter would move the prompt's head (the FIM middle's anchor every
   * few lines, or the window's start), which re-runs the whole suffix: hundreds of tokens, seconds on a 1.5B model.
   * A keystroke aborts it and comes back to its own prompt's cache (what was prefilled stays, and the next warm-up
   * goes on from it). The line below is not warmed after a shown suggestion: its prefetch (accepting it) is the
   * likelier next step; a changed context is (after the prefetch: the engine runs one thing at a time).
   */
  private scheduleWarmUp(req: CompletionRequest, ctx: DocumentContext, deferred: boolean): void {
    if (this.closed) return;
    if (!deferred) {
      if (ctx.lineSuffix.trim() === '') this.warmer.schedule(() => this.lineBelowPrompt(req, ctx));
      return;
    }
    let warming: ReturnType<CompletionService['prepare']> | null = null;
    const warmed = () => {
      if (!warming) return;
      const last = this.files.shownContext(req.path);
      if (last && !sameContext(warming.extra, last)) this.contextChangesWarmed++;
      this.remember(req.path, warming.ctx, warming.extra);
      this.deferred.sent(req.path, false, this.now(), warming.contextSettings);
    };
    // After the same idle wait as the line below: started at once after each answer, its passes made the next
    // keystrokes wait (bench:context-replay, 0.5B shape, one run: pause p50 615 ms, against 313-343 before the change).
    this.warmer.schedule(
      () => {
        warming = this.prepare(req, { current: true });
        return modelInput(req, warming.ctx, warming.extra, warming.template).built.prompt;
      },
      { warmed },
    );
  }

  /** The prompt after Enter at the cursor, or null when it only grows at the end of the prompt at `ctx`. */
  private lineBelowPrompt(req: CompletionRequest, ctx: DocumentContext): Prompt | null {
    const below = insertAt(req.doc, req.cursor, `\n${ctx.indent}`);
    const next = this.prepare({ ...req, doc: below.doc, cursor: below.cursor });
    if (!promptHeadMoves(ctx, next.ctx, next.template !== null)) return null;
    return modelInput(req, next.ctx, next.extra, next.template).built.prompt;
  }

  /**
   * What Generate from Selection shares with this pipeline (src/completion/selection/generateForSelection.ts): the FIM
   * template, the model's context and characters per token, the window budget, the extra-context ring and
   * tree-sitter. `generator` is the one to generate with (the router may wrap the service's own).
   */
  selectionInputs(generator: Generator, preset: GeneratePreset): SelectionInputs {
    const s = this.settings();
    const model = this.model();
    return {
      generator,
      template: this.template(),
      contextTokens: model.contextTokens,
      charsPerToken: model.charsPerToken,
      budget: s.budget,
      extraContextChars: s.extraContextChars,
      context: s.context,
      preset,
      ring: this.ring,
      repo: this.repo,
      syntax: this.syntax,
    };
  }

  /** Resolves when the current prefetch (if any) is done: for tests and benchmarks. */
  async idle(): Promise<void> {
    await this.prefetch.idle();
    await this.warmer.idle();
  }

  /** Aborts whatever the model is doing for this service. */
  cancelAll(): void {
    this.inflight?.abort();
    this.warmer.abort();
  }

  /**
   * Retires the service (its backend is being replaced): what runs is aborted, and every later request is
   * answered as cancelled without reaching the generator, prefetches included. Cached results still serve.
   */
  close(): void {
    this.closed = true;
    this.cancelAll();
  }
}

/** What the model is asked for a context: the prompt, and its parts for servers that build the FIM prompt. */
function modelInput(req: Pick<CompletionRequest, 'path' | 'languageId' | 'repoName'>, ctx: DocumentContext, extra: ExtraChunk[], template: FimTemplate | null) {
  // /infill's middle stays the cursor line: llama.cpp gives the suffix what the middle leaves of a quarter of
  // its batch, so a middle of several lines would cut the suffix differently at every keystroke.
  const built = buildPrompt(ctx, template, extra, req.path, { languageId: req.languageId, repoName: req.repoName });
  return { built, infill: { prefix: ctx.prefix, suffix: ctx.lineSuffix + ctx.suffix, middle: ctx.linePrefix, extra } };
}

function distinct(items: (string | null)[]): string[] {
  return [...new Set(items.filter((t): t is string => t !== null))];
}
