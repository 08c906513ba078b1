import { MOVE_CACHED_RUNS_OVER_MS, type EngineOptions } from '../shared/engineOptions';
import { beamSearch } from '../decode/beamSearch';
import { cancelledResult, emptyStats } from '../shared/cancelledResult';
import { measureCharsPerToken } from '../model/charsPerToken';
import { resolveDecodeOptions, type DecodeOptions } from '../shared/decodeOptions';
import { RequestError } from '../shared/errors';
import { KeptCaches, KEPT_LIMITS, type Rebuilt } from './keptCaches';
import { LeanKvCache } from '../model/leanCache';
import { planMovedRuns, type MovedRun } from '../model/movedRuns';
import { commonPrefixLength } from '../model/kvCache';
import { configInvFreq } from '../model/rotary';
import { PREFILL_ASIDE_OPTIONS, PREFILL_ASIDE_CHUNK } from '../shared/prefillAside';
import { eosIds, readModelFolder, type ModelFolder } from '../model/modelFolder';
import { OnnxCausalLM, defaultThreads, onnxWeightBytes, type AnyKvCache } from '../model/onnxModel';
import type { DeviceCacheCounts, DeviceReport } from '../shared/device';
import { chooseDevice } from './deviceChoice';
import { DeviceModel } from './deviceModel';
import { SamplerChain } from '../decode/samplers/chain';
import { Prng } from '../decode/samplers/prng';
import { sampleLoop, type LogitRows } from '../decode/sampleLoop';
import { logSumExpWithout } from '../decode/logSoftmax';
import { TokenPrefixIndex, planHealing, type Healing } from '../model/tokenHealing';
import { TextTokenizer } from '../model/tokenizer';
import { probeTokenizer } from '../model/tokenizerProbe';
import { checkFilesAgree, contextLength } from '../model/folderAgreement';
import { boundPrompt, promptProblem, promptText, type Prompt } from '../shared/prompt';
import { ModelFolderError } from '../shared/errors';
import type { GenerateHooks, GenerateResult, GenerationStats, ModelInfo, Sequence } from '../shared/types';
import { yieldToEventLoop } from '../shared/yieldToEventLoop';

/** The prompt as the model will see it, and what was changed to fit. */
interface PromptPlan {
  tokens: number[];
  /** Oldest prompt tokens dropped to fit the context. */
  truncated: number;
  notices: string[];
  /** Beam width (1: sampling or greedy). */
  beams: number;
  healing: Healing | null;
  /** The request's max_new_tokens, capped to half the context. */
  maxNewTokens: number;
}

/**
 * Characters of prompt text kept per token of context before tokenizing. Code runs at 2.5-4.5 characters
 * per token; 8 leaves room for long whitespace tokens while keeping a 10 MB prompt from costing seconds.
 */
const PROMPT_CHARS_PER_CONTEXT_TOKEN = 8;

/** Moved runs shorter than this are prefilled again: below it a re-run costs less than the copy (as kept caches). */
const MIN_MOVED_RUN = KEPT_LIMITS.minDropped;

/**
 * The generation loop: tokenize, prefill (reusing the KV cache of the previous request), decode
 * (sample or beam search), detokenize. One request at a time; calls queue up in order.
 */
export class Engine {
  private cache: AnyKvCache;
  /** How many of the active cache's positions are prompt (the rest were generated). */
  private cachePromptTokens = 0;
  /** The last full prefill pass's milliseconds per token (0 until one ran). */
  private prefillMsPerToken = 0;
  /** Caches of earlier prompts, for a request that comes back to one. */
  private readonly kept = new KeptCaches();
  private queue: Promise<unknown> = Promise.resolve();
  /** Token texts sorted for token healing; built on first use. */
  private prefixIndex: TokenPrefixIndex | null = null;
  private readonly stopIds: Set<number>;
  private readonly specialStopIds: Set<number>;
  readonly info: ModelInfo;

  private constructor(
    readonly folder: ModelFolder,
    readonly tokenizer: TextTokenizer,
    private readonly model: DeviceModel,
    private readonly prefillChunk: number,
    threads: number,
    /** Rotary frequencies for moving cached runs (lean graphs), or null: only shared prefixes are reused. */
    private readonly moveInvFreq: Float64Array | null,
    /** Runs are moved only when prefilling them exactly would take longer than this. */
    private readonly moveOverMs: number,
  ) {
    this.cache = model.emptyCache();
    const eos = eosIds(folder, (t) => tokenizer.tokenId(t));
    this.stopIds = new Set(eos);
    this.specialStopIds = new Set([...eos, ...tokenizer.specialIds]);
    const c = model.contract;
    const cfg = folder.config;
    this.info = {
      name: folder.name,
      dir: folder.dir,
      onnxFile: model.file,
      layers: c.layers,
      vocab: c.vocab,
      contextLength: contextLength(cfg),
      charsPerToken: measureCharsPerToken(tokenizer),
      eosIds: eos,
      specialTokens: Object.fromEntries(tokenizer.addedTokens),
      kvBytesPerToken: c.layers * 2 * c.kvHeads * c.headDim * (c.kvType === 'float32' ? 4 : 2),
      threads,
      moveCachedRunsOverMs: moveOverMs,
      canMoveCachedRuns: c.kind === 'lean',
      modelType: typeof cfg.model_type === 'string' ? cfg.model_type : 'unknown',
      device: model.report,
    };
  }

  /**
   * `onDeviceChange`: told when the GPU fails during the session and the model moves to the CPU (the report
   * in `info.device` changes with it). `log`: lines for the worker's log (the device measurement).
   */
  static async load(
    dir: string,
    opts: EngineOptions = {},
    hooks: {
      onDeviceChange?: (report: DeviceReport) => void;
      log?: (line: string) => void;
      /** Opens the session on its device; tests pass their own to put a failing device under the engine. */
      chooseDevice?: typeof chooseDevice;
    } = {},
  ): Promise<Engine> {
    const folder = readModelFolder(dir, opts);
    // Checked in a thread while the session opens: nothing here encodes text before the check has passed.
    const probed = probeTokenizer(folder.dir).then(
      () => null,
      (err: Error) => err,
    );
    let tokenizer: TextTokenizer;
    try {
      tokenizer = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
    } catch (err) {
      throw new ModelFolderError(`${folder.dir}/tokenizer.json`, `the tokenizer cannot be built: ${(err as Error).message}`);
    }
    const threads = opts.threads && opts.threads > 0 ? opts.threads : defaultThreads(onnxWeightBytes(folder.onnxPath));
    const chosen = await (hooks.chooseDevice ?? chooseDevice)(folder.onnxPath, folder.config, {
      ...opts,
      threads,
      contextLength: contextLength(folder.config),
      log: hooks.log,
    });
    const openCpu = () => OnnxCausalLM.load(folder.onnxPath, folder.config, { threads, device: 'cpu' });
    const model = new DeviceModel(chosen.model, chosen.report, openCpu, hooks.onDeviceChange);
    try {
      const stalled = await probed;
      if (stalled) throw stalled;
      checkFilesAgree(folder, tokenizer, model.contract.vocab);
      const warmUpMs = chosen.warmed ? null : await model.warmUp();
      if (warmUpMs !== null) hooks.log?.(`GPU warm-up (shader compilation) at load: ${Math.round(warmUpMs)} ms`);
    } catch (err) {
      await model.release();
      throw err;
    }
    const c = model.contract;
    const overMs = opts.moveCachedRunsOverMs ?? MOVE_CACHED_RUNS_OVER_MS;
    const invFreq = c.kind === 'lean' && overMs >= 0 ? configInvFreq(folder.config, c.headDim) : null;
    return new Engine(folder, tokenizer, model, opts.prefillChunk ?? 128, threads, invFreq, overMs);
  }

  tokenize(prompt: Prompt): number[] {
    return this.tokenizer.encodePrompt(prompt);
  }

  /** Tokens currently held in the KV cache. */
  get cachedTokens(): number {
    return this.cache.length;
  }

  /** On the GPU with the KV cache kept there: runs on its copy and uploads since the load (null elsewhere). */
  get gpuCache(): DeviceCacheCounts | null {
    const s = this.model.deviceCacheStats;
    return s && { ...s };
  }

  /** The token ids the KV cache holds (tests, debugging). */
  get cachedTokenIds(): readonly number[] {
    return this.cache.tokens;
  }

  /** Forgets the KV cache (the next request prefills everything). */
  resetCache(): void {
    this.cache = this.model.emptyCache();
    this.cachePromptTokens = 0;
    this.kept.clear();
  }

  /** Token ids of the caches kept beside the active one, oldest first (tests, debugging). */
  get keptTokenIds(): readonly (readonly number[])[] {
    return this.kept.tokenLists;
  }

  generate(prompt: Prompt, options: Partial<DecodeOptions> = {}, hooks: GenerateHooks = {}): Promise<GenerateResult> {
    const run = this.queue.then(() => {
      hooks.onStart?.();
      return this.run(prompt, options, hooks);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Generator.prefillAside (shared/prefillAside.ts): the prompt prefilled, the cache in use kept beside it. */
  async prefillAside(prompt: Prompt, hooks: { signal?: AbortSignal } = {}): Promise<void> {
    await this.generate(prompt, PREFILL_ASIDE_OPTIONS, { signal: hooks.signal, prefillChunk: PREFILL_ASIDE_CHUNK });
  }

  async dispose(): Promise<void> {
    await this.queue;
    await this.model.release();
  }

  /** One request: prompt tokens, prefill, decode (beams or samples), the result with its stats. */
  private async run(input: Prompt, options: Partial<DecodeOptions>, hooks: GenerateHooks): Promise<GenerateResult> {
    const t0 = performance.now();
    const resolved = resolveDecodeOptions(options);
    const problem = promptProblem(input);
    if (problem) throw new RequestError(problem);
    if (hooks.signal?.aborted) return cancelledResult();
    const plan = this.planPrompt(input, resolved);
    // The request's options with what the plan settled (max_new_tokens capped to the context).
    const opts: DecodeOptions = { ...resolved, maxNewTokens: plan.maxNewTokens };
    const stats: GenerationStats = { ...emptyStats(), promptTokens: plan.tokens.length, truncatedTokens: plan.truncated };
    const finish = (sequences: Sequence[]): GenerateResult => {
      stats.totalMs = performance.now() - t0;
      stats.generatedTokens = sequences.reduce((s, q) => s + q.tokens.length, 0);
      return { ...sequences[0], sequences, stats, ...(plan.notices.length > 0 ? { notices: plan.notices } : {}) };
    };

    const first = await this.prefillTokens(plan.tokens, stats, hooks.signal, hooks.prefillChunk);
    stats.prefillMs = performance.now() - t0;
    if (!first) return finish(cancelledResult().sequences);

    const t1 = performance.now();
    const stopIds = opts.ignoreEos ? new Set<number>() : opts.stopOnSpecialTokens ? this.specialStopIds : this.stopIds;
    const sequences =
      plan.beams > 1
        ? await this.decodeBeams(first.logits, plan, { ...opts, numBeams: plan.beams }, stopIds, hooks, t0)
        : await this.decodeSamples(first, plan, opts, stopIds, hooks, t0, stats);
    stats.decodeMs = performance.now() - t1;
    return finish(sequences);
  }

  /**
   * The prompt's tokens for this request: bounded before tokenizing, `maxNewTokens` capped to half the
   * context, the oldest tokens dropped to fit, and the last one taken back for token healing.
   */
  private planPrompt(input: Prompt, opts: Readonly<DecodeOptions>): PromptPlan {
    const ctx = this.info.contextLength;
    const notices: string[] = [];
    // Tokenizing is synchronous and cannot be cancelled: never tokenize far more text than the context holds.
    const bounded = boundPrompt(input, ctx * PROMPT_CHARS_PER_CONTEXT_TOKEN);
    if (bounded.droppedChars > 0)
      notices.push(`the prompt's first ${bounded.droppedChars} characters were dropped before tokenizing (the model's context is ${ctx} tokens)`);
    let tokens = this.tokenizer.encodePrompt(bounded.prompt);
    if (tokens.length === 0) throw new RequestError('prompt encodes to no tokens');
    // Keep room to generate: drop the oldest prompt tokens rather than fail.
    const cap = Math.max(1, Math.floor(ctx / 2));
    const maxNewTokens = Math.min(opts.maxNewTokens, cap);
    if (maxNewTokens < opts.maxNewTokens) notices.push(`max_new_tokens ${opts.maxNewTokens} was capped to ${cap}, half the model's context of ${ctx} tokens`);
    // Dropped in steps of an eighth of the context: while a prompt grows keystroke by keystroke, its start
    // stays put and the KV cache stays reusable (a one-token shift would invalidate all of it). A leading run
    // of special tokens (a FIM prefix marker, BOS) is kept: without it the model no longer knows the format.
    const overflow = tokens.length + maxNewTokens - ctx;
    const quantum = Math.max(1, Math.floor(ctx / 8));
    let head = 0;
    while (head < tokens.length - 1 && this.tokenizer.specialIds.has(tokens[head])) head++;
    const truncated = overflow > 0 ? Math.min(tokens.length - 1 - head, Math.ceil(overflow / quantum) * quantum) : 0;
    if (truncated > 0) tokens = [...tokens.slice(0, head), ...tokens.slice(head + truncated)];
    const beams = opts.numBeams > 1 ? opts.numBeams : opts.temperature === 0 && opts.numReturnSequences > 1 ? opts.numReturnSequences : 1;
    // Token healing (sampling, greedy and beams).
    let healing: Healing | null = null;
    if (opts.tokenHealing) {
      this.prefixIndex ??= new TokenPrefixIndex(this.tokenizer);
      healing = planHealing(promptText(bounded.prompt), tokens, this.tokenizer, this.prefixIndex);
    }
    if (healing) tokens = healing.tokens;
    return { tokens, truncated, notices, beams, healing, maxNewTokens };
  }

  /** Beam search (n-best) from the prompt's logits; the batch-1 prompt cache is kept for the next request. */
  private async decodeBeams(
    firstLogits: Float32Array,
    plan: PromptPlan,
    opts: DecodeOptions,
    stopIds: Set<number>,
    hooks: GenerateHooks,
    startedAt: number,
  ): Promise<Sequence[]> {
    const ctx = this.info.contextLength;
    const promptCache = this.cache;
    let beamCache = promptCache;
    const sequences = await beamSearch({
      firstLogits,
      heal: plan.healing ? { text: plan.healing.text, allowed: this.prefixIndex!.startingWith(plan.healing.text) } : undefined,
      vocab: this.model.contract.vocab,
      opts,
      stopIds,
      decode: (ids) => this.tokenizer.decode(ids),
      signal: hooks.signal,
      startedAt,
      now: () => performance.now(),
      stepper: {
        step: async (next, parents) => {
          const r = await this.forward(
            next.map((t) => [t]),
            beamCache.gather(parents),
          );
          beamCache = r.cache;
          await yieldToEventLoop();
          return r.logits;
        },
        room: () => ctx - beamCache.length,
      },
    });
    this.cache = promptCache;
    if (hooks.onText && sequences[0].text) hooks.onText(sequences[0].text);
    return sequences;
  }

  /** Sampling or greedy, `numReturnSequences` times from the same prompt cache, with prompt-lookup drafts. */
  private async decodeSamples(
    first: LogitRows,
    plan: PromptPlan,
    opts: DecodeOptions,
    stopIds: Set<number>,
    hooks: GenerateHooks,
    startedAt: number,
    stats: GenerationStats,
  ): Promise<Sequence[]> {
    const ctx = this.info.contextLength;
    const chain = new SamplerChain(opts);
    const rng = new Prng(opts.seed);
    const draftStats = { drafted: 0, accepted: 0 };
    const sequences: Sequence[] = [];
    for (let n = 0; n < opts.numReturnSequences; n++) {
      if (n > 0) this.cache = this.cache.crop(plan.tokens.length);
      sequences.push(
        await sampleLoop({
          first,
          healText: plan.healing?.text,
          healAllowed: plan.healing ? (rest) => (rest === plan.healing!.text ? plan.healing!.allowed : this.prefixIndex!.compatibleWith(rest)) : undefined,
          history: plan.tokens,
          opts,
          chain,
          rng,
          stopIds,
          decode: (ids) => this.tokenizer.decode(ids),
          signal: hooks.signal,
          startedAt,
          now: () => performance.now(),
          onText: n === 0 ? hooks.onText : undefined,
          onFirstLine: n === 0 ? hooks.onFirstLine : undefined,
          draftStats,
          stepper: {
            step: (id) => this.advance([id]),
            stepMany: (ids) => this.advance(ids, ids.length),
            rollback: (k) => {
              if (k > 0) this.cache = this.cache.crop(this.cache.length - k);
            },
            room: () => ctx - this.cache.length,
          },
        }),
      );
      if (hooks.signal?.aborted) break;
    }
    stats.draftTokens = draftStats.drafted;
    stats.acceptedDraftTokens = draftStats.accepted;
    return sequences;
  }

  /** Runs tokens on the batch-1 cache and keeps it; yields, so that a cancel can land between passes. */
  private async advance(ids: number[], keep = 1): Promise<LogitRows> {
    const r = await this.forward([ids], this.cache, keep);
    this.cache = r.cache;
    await yieldToEventLoop();
    return { logits: r.logits, lse: r.lse };
  }

  /**
   * One model pass; logit columns past the tokenizer's vocabulary (padding) can never be picked, and the
   * rows' log-sum-exp (when the graph gives it) is corrected to leave them out.
   */
  private async forward(...args: Parameters<DeviceModel['forward']>): ReturnType<DeviceModel['forward']> {
    const r = await this.model.forward(...args);
    const used = this.tokenizer.vocabSize;
    const cols = this.model.contract.vocab;
    if (used >= cols) return r;
    let lse = r.lse;
    for (let i = 0; i * cols < r.logits.length; i++) {
      const row = r.logits.subarray(i * cols, (i + 1) * cols);
      const corrected = lse ? logSumExpWithout(row, used, lse[i]) : null;
      if (lse && corrected !== null) lse[i] = corrected;
      else lse = undefined;
      row.fill(-Infinity, used);
    }
    return { ...r, lse };
  }

  /**
   * A cache for `tokens` with `prefix`'s first `shared` positions and the runs that moved (MIN_MOVED_RUN tokens
   * or more) of the one source among `sources` that holds the most of the rest, or null when none moved.
   */
  private moveRuns(prefix: AnyKvCache, shared: number, sources: readonly AnyKvCache[], tokens: number[]): Rebuilt | null {
    if (!this.moveInvFreq || !(prefix instanceof LeanKvCache) || prefix.batch !== 1) return null;
    // Exact while the re-run is quick; an unmeasured speed counts as quick (the first prefill measures it).
    if ((tokens.length - shared) * this.prefillMsPerToken <= this.moveOverMs) return null;
    let best: { source: LeanKvCache; runs: MovedRun[]; covered: number } | null = null;
    for (const source of sources) {
      if (!(source instanceof LeanKvCache) || source.batch !== 1) continue;
      // What a source shares with the prompt's head is in place, not moved: its runs are looked for after it.
      const from = Math.min(shared, commonPrefixLength(source.tokens, tokens));
      const runs = planMovedRuns(source.tokens, tokens, shared, MIN_MOVED_RUN, from);
      const covered = runs.reduce((n, r) => n + r.length, 0);
      if (covered > (best?.covered ?? 0)) best = { source, runs, covered };
    }
    if (!best) return null;
    return { cache: LeanKvCache.assemble(prefix, shared, best.runs, tokens, this.moveInvFreq, best.source), runs: best.runs };
  }

  /**
   * Reuses the longest common token prefix of the active or a kept cache (keptCaches.ts), prefills the rest in
   * chunks. Null when cancelled; what was prefilled before the cancel stays cached.
   */
  private async prefillTokens(tokens: number[], stats: GenerationStats, signal?: AbortSignal, chunkSize?: number): Promise<LogitRows | null> {
    const step = chunkSize && chunkSize > 0 ? Math.floor(chunkSize) : this.prefillChunk;
    const { cache, reuse, runs } = this.kept.choose(this.cache, this.cachePromptTokens, tokens, (prefix, shared, sources) =>
      this.moveRuns(prefix, shared, sources, tokens),
    );
    this.cache = cache;
    this.cachePromptTokens = reuse;
    stats.reusedTokens = reuse;
    let last: LogitRows | null = null;
    let at = reuse;
    // The tokens between moved runs are prefilled; each run, already in the cache, is then taken as it is.
    for (const run of [...runs, { to: tokens.length, length: 0 }]) {
      while (at < run.to) {
        if (signal?.aborted) return null;
        const chunk = tokens.slice(at, Math.min(at + step, run.to));
        const started = performance.now();
        last = await this.advance(chunk);
        // Passes of a few tokens are mostly overhead: the speed is read off full ones.
        if (chunk.length >= Math.min(step, 32)) this.prefillMsPerToken = (performance.now() - started) / chunk.length;
        this.cachePromptTokens = this.cache.length;
        stats.prefillTokens += chunk.length;
        at += chunk.length;
      }
      if (run.length === 0) continue;
      this.cache = (this.cache as LeanKvCache).through(tokens, run.to + run.length);
      this.cachePromptTokens = this.cache.length;
      stats.reusedTokens += run.length;
      at = run.to + run.length;
    }
    return last;
  }
}
