import { beamSearch } from './beamSearch';
import { resolveDecodeOptions, type DecodeOptions } from './decodeOptions';
import { RequestError } from './errors';
import { commonPrefixLength } from './kvCache';
import { eosIds, readModelFolder, type ModelFolder, type ReadModelFolderOptions } from './modelFolder';
import { OnnxCausalLM, defaultThreads, onnxWeightBytes, type AnyKvCache, type SessionOptions } from './onnxModel';
import { SamplerChain } from './samplers/chain';
import { Prng } from './samplers/prng';
import { sampleLoop } from './sampleLoop';
import { TokenPrefixIndex, planHealing, restrictTo } from './tokenHealing';
import { TextTokenizer } from './tokenizer';
import { ModelFolderError } from './errors';
import type { GenerateResult, GenerationStats, ModelInfo, Sequence } from './types';

export interface EngineOptions extends SessionOptions, ReadModelFolderOptions {
  /** Prompt tokens per prefill call: a cancel waits for at most one chunk. */
  prefillChunk?: number;
}

export interface GenerateHooks {
  signal?: AbortSignal;
  /** Streamed text of the first sequence, never half a character nor part of a stop string. */
  onText?: (delta: string) => void;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The generation loop: tokenize, prefill (reusing the KV cache of the previous request), decode
 * (sample or beam search), detokenize. One request at a time; calls queue up in order.
 */
export class Engine {
  private cache: AnyKvCache;
  private queue: Promise<unknown> = Promise.resolve();
  /** Token texts sorted for token healing; built on first use. */
  private prefixIndex: TokenPrefixIndex | null = null;
  private readonly stopIds: Set<number>;
  private readonly specialStopIds: Set<number>;
  readonly info: ModelInfo;

  private constructor(
    readonly folder: ModelFolder,
    readonly tokenizer: TextTokenizer,
    private readonly model: OnnxCausalLM,
    private readonly prefillChunk: number,
    threads: number,
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
      eosIds: eos,
      specialTokens: Object.fromEntries(tokenizer.addedTokens),
      kvBytesPerToken: c.layers * 2 * c.kvHeads * c.headDim * (c.kvType === 'float32' ? 4 : 2),
      threads,
      modelType: typeof cfg.model_type === 'string' ? cfg.model_type : 'unknown',
    };
  }

  static async load(dir: string, opts: EngineOptions = {}): Promise<Engine> {
    const folder = readModelFolder(dir, opts);
    let tokenizer: TextTokenizer;
    try {
      tokenizer = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
    } catch (err) {
      throw new ModelFolderError(`${folder.dir}/tokenizer.json`, `the tokenizer cannot be built: ${(err as Error).message}`);
    }
    const threads = opts.threads && opts.threads > 0 ? opts.threads : defaultThreads(onnxWeightBytes(folder.onnxPath));
    const model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads });
    if (tokenizer.vocabSize > model.contract.vocab) {
      await model.release();
      throw new ModelFolderError(
        `${folder.dir}/tokenizer.json`,
        `the tokenizer has ${tokenizer.vocabSize} tokens but the model's logits have only ${model.contract.vocab} columns`,
      );
    }
    return new Engine(folder, tokenizer, model, opts.prefillChunk ?? 128, threads);
  }

  tokenize(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  /** Tokens currently held in the KV cache. */
  get cachedTokens(): number {
    return this.cache.length;
  }

  /** Forgets the KV cache (the next request prefills everything). */
  resetCache(): void {
    this.cache = this.model.emptyCache();
  }

  generate(prompt: string, options: Partial<DecodeOptions> = {}, hooks: GenerateHooks = {}): Promise<GenerateResult> {
    const run = this.queue.then(() => this.run(prompt, options, hooks));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Prefills the prompt into the cache without generating (warm-up, speculative prefetch). */
  async prefill(prompt: string, signal?: AbortSignal): Promise<GenerationStats> {
    const result = await this.generate(prompt, { maxNewTokens: 1 }, { signal });
    return result.stats;
  }

  async dispose(): Promise<void> {
    await this.queue;
    await this.model.release();
  }

  private async run(prompt: string, options: Partial<DecodeOptions>, hooks: GenerateHooks): Promise<GenerateResult> {
    const t0 = performance.now();
    const opts = resolveDecodeOptions(options);
    if (typeof prompt !== 'string' || prompt.length === 0) throw new RequestError('prompt must be a non-empty string');
    let tokens = this.tokenizer.encode(prompt);
    if (tokens.length === 0) throw new RequestError('prompt encodes to no tokens');
    const ctx = this.info.contextLength;
    // Keep room to generate: drop the oldest prompt tokens rather than fail.
    opts.maxNewTokens = Math.min(opts.maxNewTokens, Math.max(1, Math.floor(ctx / 2)));
    // Dropped in steps of an eighth of the context: while a prompt grows keystroke by keystroke, its start
    // stays put and the KV cache stays reusable (a one-token shift would invalidate all of it).
    const overflow = tokens.length + opts.maxNewTokens - ctx;
    const quantum = Math.max(1, Math.floor(ctx / 8));
    const truncated = overflow > 0 ? Math.min(tokens.length - 1, Math.ceil(overflow / quantum) * quantum) : 0;
    if (truncated > 0) tokens = tokens.slice(truncated);
    const beams = opts.numBeams > 1 ? opts.numBeams : opts.temperature === 0 && opts.numReturnSequences > 1 ? opts.numReturnSequences : 1;
    // Token healing (sampling and greedy; beam search keeps the prompt as it is).
    const healing = opts.tokenHealing && beams === 1 ? planHealing(prompt, tokens, this.tokenizer, (this.prefixIndex ??= new TokenPrefixIndex(this.tokenizer))) : null;
    if (healing) tokens = healing.tokens;

    const stats: GenerationStats = {
      promptTokens: tokens.length,
      reusedTokens: 0,
      prefillTokens: 0,
      generatedTokens: 0,
      truncatedTokens: truncated,
      prefillMs: 0,
      decodeMs: 0,
      totalMs: 0,
      draftTokens: 0,
      acceptedDraftTokens: 0,
    };
    const draftStats = { drafted: 0, accepted: 0 };
    const finish = (sequences: Sequence[]): GenerateResult => {
      stats.totalMs = performance.now() - t0;
      stats.generatedTokens = sequences.reduce((s, q) => s + q.tokens.length, 0);
      return { ...sequences[0], sequences, stats };
    };

    const firstLogits = await this.prefillTokens(tokens, stats, hooks.signal);
    stats.prefillMs = performance.now() - t0;
    if (!firstLogits) return finish([{ text: '', finishReason: 'cancelled', logprob: NaN, tokens: [] }]);

    const t1 = performance.now();
    const stopIds = opts.ignoreEos ? new Set<number>() : opts.stopOnSpecialTokens ? this.specialStopIds : this.stopIds;
    const decode = (ids: number[]) => this.tokenizer.decode(ids);
    const now = () => performance.now();
    const room = () => ctx - this.cache.length;
    let sequences: Sequence[];
    if (beams > 1) {
      const promptCache = this.cache;
      let beamCache = promptCache;
      sequences = await beamSearch({
        firstLogits,
        vocab: this.model.contract.vocab,
        opts: { ...opts, numBeams: beams },
        stopIds,
        decode,
        signal: hooks.signal,
        startedAt: t0,
        now,
        stepper: {
          step: async (next, parents) => {
            const r = await this.model.forward(
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
      // The batch-1 prompt cache is untouched by the beams: keep it for the next request.
      this.cache = promptCache;
      if (hooks.onText && sequences[0].text) hooks.onText(sequences[0].text);
    } else {
      const chain = new SamplerChain(opts);
      const rng = new Prng(opts.seed);
      sequences = [];
      for (let n = 0; n < opts.numReturnSequences; n++) {
        if (n > 0) this.cache = this.cache.crop(tokens.length);
        sequences.push(
          await sampleLoop({
            firstLogits: healing ? restrictTo(firstLogits, healing.allowed) : firstLogits,
            healText: healing?.text,
            history: tokens,
            opts,
            chain,
            rng,
            stopIds,
            decode,
            signal: hooks.signal,
            startedAt: t0,
            now,
            onText: n === 0 ? hooks.onText : undefined,
            draftStats,
            stepper: {
              step: async (id) => {
                const r = await this.model.forward([[id]], this.cache);
                this.cache = r.cache;
                await yieldToEventLoop();
                return r.logits;
              },
              stepMany: async (ids) => {
                const r = await this.model.forward([ids], this.cache, ids.length);
                this.cache = r.cache;
                await yieldToEventLoop();
                return r.logits;
              },
              rollback: (n) => {
                if (n > 0) this.cache = this.cache.crop(this.cache.length - n);
              },
              room,
            },
          }),
        );
        if (hooks.signal?.aborted) break;
      }
    }
    stats.decodeMs = performance.now() - t1;
    stats.draftTokens = draftStats.drafted;
    stats.acceptedDraftTokens = draftStats.accepted;
    return finish(sequences);
  }

  /** Reuses the longest common token prefix of the cache, prefills the rest in chunks. Null when cancelled. */
  private async prefillTokens(tokens: number[], stats: GenerationStats, signal?: AbortSignal): Promise<Float32Array | null> {
    // At least one token is always run: its logits start the decode.
    const reuse = Math.min(commonPrefixLength(this.cache.tokens, tokens), tokens.length - 1);
    this.cache = this.cache.crop(reuse);
    stats.reusedTokens = reuse;
    let logits: Float32Array | null = null;
    for (let at = reuse; at < tokens.length; at += this.prefillChunk) {
      if (signal?.aborted) return null;
      const chunk = tokens.slice(at, at + this.prefillChunk);
      const r = await this.model.forward([chunk], this.cache);
      this.cache = r.cache;
      stats.prefillTokens += chunk.length;
      logits = r.logits;
      await yieldToEventLoop();
    }
    return logits;
  }
}

function contextLength(cfg: Record<string, unknown>): number {
  for (const key of ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'seq_length']) {
    const v = cfg[key];
    if (typeof v === 'number' && v > 0) return v;
  }
  return 2048;
}
