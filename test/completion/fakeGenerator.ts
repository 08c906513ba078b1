import { cancelledResult, emptyStats } from '../../src/engine/shared/cancelledResult';
import type { DecodeOptions } from '../../src/engine/shared/decodeOptions';
import { promptText, type Prompt } from '../../src/engine/shared/prompt';
import { firstLineToShow } from '../../src/engine/shared/firstLineToShow';
import type { GenerateHooks, GenerateResult } from '../../src/engine/shared/types';
import type { Generator } from '../../src/completion/generator';

export interface FakeCall {
  prompt: string;
  options: Partial<DecodeOptions>;
  signal?: AbortSignal;
  /** Set when the call's signal aborted (ms since the fake was made). */
  abortedAt?: number;
  startedAt: number;
  /** Streams more text to the caller, `elapsedMs` after the request started (for `partialLineMs`). */
  stream(text: string, elapsedMs?: number): void;
  /** Finishes the generation with everything streamed so far (or `text`), one token per character, each of log-probability `logprob`. */
  finish(text?: string, logprob?: number): void;
}

/**
 * A Generator whose outputs the test decides: each call is recorded, streams only when told to, and ends
 * when told to or when its signal aborts (then it answers `cancelled`, as the engine does). With `auto`, a
 * call answers at once with `auto(prompt)`.
 */
export class FakeGenerator implements Generator {
  readonly calls: FakeCall[] = [];
  private readonly t0 = performance.now();
  /** Resolves the next time generate() is called. */
  private waiters: (() => void)[] = [];

  constructor(
    private readonly auto?: (prompt: string) => string,
    /** Log-probability of every token the fake returns (near-certain by default, so the gate shows them). */
    private readonly logprob = -0.01,
  ) {}

  nextCall(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks: GenerateHooks = {}): Promise<GenerateResult> {
    return new Promise<GenerateResult>((resolve) => {
      let streamed = '';
      let onFirstLine = hooks.onFirstLine;
      let done = false;
      const end = (result: GenerateResult) => {
        if (done) return;
        done = true;
        resolve(result);
      };
      const call: FakeCall = {
        prompt: promptText(prompt),
        options,
        signal: hooks.signal,
        startedAt: performance.now() - this.t0,
        stream: (t, elapsedMs = 0) => {
          streamed += t;
          hooks.onText?.(t);
          // One token per character, as finish() reports them; the engine's own rule for what shows.
          const n = streamed.length;
          const ends = Array.from({ length: n }, (_, i) => i + 1);
          const line = onFirstLine ? firstLineToShow(streamed, Array(n).fill(this.logprob), ends, elapsedMs, options.partialLineMs ?? 0) : null;
          if (onFirstLine && line) {
            onFirstLine(line);
            onFirstLine = undefined;
          }
        },
        finish: (t, lp = this.logprob) => {
          const text = t ?? streamed;
          const chars = [...text];
          let at = 0;
          const seq = {
            text,
            finishReason: 'stop' as const,
            logprob: NaN,
            tokens: chars.map((c) => c.charCodeAt(0)),
            tokenLogprobs: chars.map(() => lp),
            tokenTextEnds: chars.map((c) => (at += c.length)),
          };
          end({ ...seq, sequences: [seq], stats: { ...emptyStats(), promptTokens: 10, generatedTokens: seq.tokens.length } });
        },
      };
      const onAbort = () => {
        call.abortedAt = performance.now() - this.t0;
        end(cancelledResult());
      };
      if (hooks.signal?.aborted) onAbort();
      else hooks.signal?.addEventListener('abort', onAbort, { once: true });
      this.calls.push(call);
      for (const w of this.waiters.splice(0)) w();
      if (this.auto && !done) call.finish(this.auto(call.prompt));
    });
  }
}
