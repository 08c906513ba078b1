import type { Generator, BackendHooks } from '../src/completion/generator';
import type { DecodeOptions } from '../src/engine/shared/decodeOptions';
import type { Prompt } from '../src/engine/shared/prompt';
import { firstLineToShow } from '../src/engine/shared/firstLineToShow';
import type { FirstLine, GenerateResult } from '../src/engine/shared/types';

/** What a real model generated for one request of the replay: its length and why it stopped. */
export interface TracedLength {
  tokens: number;
  finish: string;
  /** A block's first line as the real model reported it (its token count is when): replayed at that token. */
  firstLine?: FirstLine;
  /**
   * What the real model wrote, token by token: a slower shape reports the partial line the real model's text
   * would give once `partialLineMs` have passed on the shape (firstLineToShow.ts).
   */
  written?: { text: string; tokenLogprobs: number[]; tokenTextEnds: number[] };
}

/** Per request key (`<file>#<keystroke>`, `prefetch:` before it for the prefetch that followed). */
export type LengthTrace = Record<string, TracedLength>;

/**
 * The replay's generator: the worker client, counting every generation (cancelled ones included) and either
 * recording each request's length (a real model's run) or imposing the recorded one (a random-weight shape,
 * which never stops where code would: it is made to write as many tokens, every content stop off; the time
 * budget still applies).
 */
/** One call to the model during a replay. */
export interface ModelEvent {
  kind: 'request' | 'prefetch' | 'warm-up';
  start: number;
  end: number;
  promptTokens?: number;
  prefillTokens?: number;
  prefillMs?: number;
  finish?: string;
}

export class TracingGenerator implements Generator {
  /** Set by the replay before each request; prefetches started by the service take `prefetch:` + it. */
  key = '';
  readonly recorded: LengthTrace = {};
  generated = 0;
  /** Tokens of generations that were cancelled (typed over before they finished). */
  cancelledTokens = 0;
  calls = 0;
  /** Warm-ups of the line below (Generator.prefillAside) passed to the backend: they write nothing to record or impose. */
  warmUps = 0;
  readonly prefillAside?: Generator['prefillAside'];
  private readonly seen = new Set<string>();
  /** Every call to the model, with when it ran (performance.now()): what a slow pause waited behind. */
  readonly events: ModelEvent[] = [];

  constructor(
    private readonly inner: Generator,
    private readonly impose: LengthTrace | null,
  ) {
    const prefillAside = inner.prefillAside?.bind(inner);
    if (prefillAside)
      this.prefillAside = (prompt, hooks) => {
        this.warmUps++;
        const event: ModelEvent = { kind: 'warm-up', start: performance.now(), end: Number.NaN };
        this.events.push(event);
        return prefillAside(prompt, hooks).finally(() => {
          event.end = performance.now();
        });
      };
  }

  async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks?: BackendHooks): Promise<GenerateResult> {
    // The first call for a key is its request; a later one within the same keystroke is the prefetch.
    const key = this.seen.has(this.key) ? `prefetch:${this.key}` : this.key;
    this.seen.add(this.key);
    // A request the real model's run never finished (typed over) gets that run's median length.
    const traced = this.impose?.[key];
    const median = this.impose ? this.medianImposed() : undefined;
    const imposed =
      traced?.finish === 'cancelled' ? { ...traced, tokens: Math.max(traced.tokens, median?.tokens ?? 0) } : this.impose ? (traced ?? median) : undefined;
    // The content stops (EOS, newlines, stop strings) are the real model's, so they are replaced by its length;
    // the time budget is not content but speed, so it stays: a slower shape is cut where the editor would cut it.
    const opts = imposed ? { ...options, maxNewTokens: Math.max(1, imposed.tokens), maxLines: 0, stop: [], ignoreEos: true } : options;
    this.calls++;
    const event: ModelEvent = { kind: key.startsWith('prefetch:') ? 'prefetch' : 'request', start: performance.now(), end: Number.NaN };
    this.events.push(event);
    // A random-weight model never writes a line of code: the real model's first line is reported when the shape
    // has written as many tokens (one streamed piece a token), so the pipeline can show it as early.
    let firstLine: FirstLine | undefined;
    let streamed = 0;
    let reported = false;
    const replayed = imposed?.firstLine;
    const startedAt = performance.now();
    const report = (line: FirstLine) => {
      reported = true;
      hooks?.onFirstLine?.(line);
    };
    const inner: BackendHooks | undefined =
      hooks && imposed
        ? {
            ...hooks,
            onFirstLine: undefined,
            onText: (d) => {
              hooks.onText?.(d);
              streamed++;
              if (reported) return;
              if (replayed && streamed === replayed.tokenLogprobs.length) return report(replayed);
              const partial = partialOfWritten(imposed.written, streamed, performance.now() - startedAt, opts.partialLineMs ?? 0);
              if (partial) report(partial);
            },
          }
        : hooks && {
            ...hooks,
            onFirstLine: (l) => {
              firstLine = l;
              hooks.onFirstLine?.(l);
            },
          };
    const r = await this.inner.generate(prompt, opts, inner);
    Object.assign(event, {
      end: performance.now(),
      promptTokens: r.stats.promptTokens,
      prefillTokens: r.stats.prefillTokens,
      prefillMs: r.stats.prefillMs,
      finish: r.finishReason,
    });
    this.generated += r.stats.generatedTokens;
    if (r.finishReason === 'cancelled') this.cancelledTokens += r.stats.generatedTokens;
    // A generation stopped after its first line (the pipeline's verdict on that line: held back, or an answer the
    // filters drop) is replayed as far as that line, which brings the same verdict; one typed over then gets at
    // least the median length, as if it had not been recorded.
    if (r.finishReason === 'cancelled' && firstLine && !firstLine.partial && !this.impose)
      this.recorded[key] = {
        tokens: r.stats.generatedTokens,
        finish: 'cancelled',
        firstLine,
        written: { text: r.text, tokenLogprobs: r.tokenLogprobs, tokenTextEnds: r.tokenTextEnds },
      };
    else if (r.finishReason !== 'cancelled')
      this.recorded[key] = {
        tokens: r.stats.generatedTokens,
        finish: r.finishReason,
        firstLine,
        written: { text: r.text, tokenLogprobs: r.tokenLogprobs, tokenTextEnds: r.tokenTextEnds },
      };
    return r;
  }

  private median: TracedLength | undefined;
  private medianImposed(): TracedLength | undefined {
    if (this.median || !this.impose) return this.median;
    const lengths = Object.values(this.impose)
      .filter((t) => t.finish !== 'cancelled')
      .map((t) => t.tokens)
      .sort((a, b) => a - b);
    if (lengths.length > 0) this.median = { tokens: lengths[Math.floor(lengths.length / 2)], finish: 'median' };
    return this.median;
  }
}

/** The real model's partial first line after its first `tokens` tokens, `elapsedMs` into the shape's request, if one shows. */
function partialOfWritten(written: TracedLength['written'], tokens: number, elapsedMs: number, partialLineMs: number): FirstLine | null {
  if (!written || tokens > written.tokenTextEnds.length) return null;
  const ends = written.tokenTextEnds.slice(0, tokens);
  const line = firstLineToShow(written.text.slice(0, ends.at(-1) ?? 0), written.tokenLogprobs.slice(0, tokens), ends, elapsedMs, partialLineMs);
  return line?.partial ? line : null;
}
