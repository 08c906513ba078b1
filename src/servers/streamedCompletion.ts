import type { DecodeOptions } from '../engine/shared/decodeOptions';
import { TextStopper } from '../engine/shared/textStopper';
import { firstLineToShow } from '../engine/shared/firstLineToShow';
import type { FinishReason, FirstLine, GenerationStats, Sequence } from '../engine/shared/types';
import type { Chunk } from './protocols';
import { ServerError } from './serverErrors';
import { HealedPrefix, healedLogprob } from './serverHealing';

/**
 * Output text allowed per max_new_tokens before a server that ignores the limit (or floods) is cut off.
 * Generous: real tokens are a few characters; a long run of spaces may be one token of 16-64.
 */
const FLOOD_CHARS_PER_NEW_TOKEN = 64;

/** One completion as read: its sequence and the server's numbers for it. */
export interface StreamedResult {
  seq: Sequence;
  stats?: Partial<GenerationStats>;
  /** Tokens seen in the raw stream (the count when the server reports none). */
  streamedTokens: number;
}

/** Where a completion's text goes as it is written (the first completion of a request only). */
export interface StreamSinks {
  onText?: (delta: string) => void;
  onFirstLine?: (line: FirstLine) => void;
}

/**
 * One completion of a server's stream, read chunk by chunk: the held-back text of token healing first, then
 * the same stop rules as the local engine (TextStopper), the token log-probabilities lined up with the text,
 * and the first line reported as soon as it is written. A request with alternatives reads one per completion.
 */
export class StreamedCompletion {
  private readonly stopper: TextStopper;
  private readonly healing: HealedPrefix | null;
  /** Characters of the raw stream so far (the held-back text included): the log-probabilities' ends are counted there. */
  private rawChars = 0;
  private text = '';
  private readonly tokenLogprobs: number[] = [];
  private readonly tokenTextEnds: number[] = [];
  finish: FinishReason | null = null;
  /** Whether the server sent anything for it (one that ignores n sends the first completion alone). */
  seen = false;
  private stats: Partial<GenerationStats> | undefined;
  private readonly onText?: (delta: string) => void;
  /** Called once, then dropped. */
  private onFirstLine?: (line: FirstLine) => void;

  constructor(
    private readonly opts: DecodeOptions,
    private readonly startedAt: number,
    /** The text held back for token healing, which the answer must write first ('' when none). */
    private readonly healed: string,
    sinks: StreamSinks = {},
  ) {
    this.stopper = new TextStopper(opts, startedAt);
    this.healing = healed ? new HealedPrefix(healed) : null;
    this.onText = sinks.onText;
    this.onFirstLine = sinks.onFirstLine;
  }

  /** The server's token counts for it, once they came (a trailer may bring them after the text). */
  get promptTokens(): number | undefined {
    return this.stats?.promptTokens;
  }

  /** Takes one chunk of the stream; sets `finish` when the completion is over (a stop rule, the server's end). */
  take(chunk: Chunk, now: number): void {
    this.seen = true;
    if (chunk.stats) this.stats = { ...this.stats, ...chunk.stats };
    if (this.finish) return;
    for (const lp of chunk.logprobs) {
      // While the held-back text is not yet written, the local engine reports a token's log-probability among
      // the tokens that continue it: the same from the server's top candidates (serverHealing.ts).
      const left = this.healed.slice(this.rawChars);
      this.rawChars += lp.chars;
      this.tokenLogprobs.push(left && lp.top ? healedLogprob(lp, lp.top, left) : lp.logprob);
      this.tokenTextEnds.push(Math.max(0, this.rawChars - this.healed.length));
    }
    const past = this.healing ? this.healing.push(chunk.text) : chunk.text;
    if (past === null) {
      // The answer did not write the held-back text first: the model went elsewhere, so there is no answer.
      this.finish = 'stop';
      return;
    }
    this.emit(this.stopper.push(past, now), now);
    if (this.stopper.finishReason) this.finish = this.stopper.finishReason;
    else if (chunk.done) this.finish = chunk.finish ?? 'eos';
    // A server that ignores max_tokens (or floods) is cut off: no token is this long.
    else if (this.text.length > this.opts.maxNewTokens * FLOOD_CHARS_PER_NEW_TOKEN) this.finish = 'length';
  }

  /**
   * The completion as the local engine would report it, once the stream has ended (or was aborted). The
   * log-probabilities describe the raw stream; those of the tokens that made it into the text are kept and, as
   * the local engine does, the one a stop rule fired on (its text may be all stop string: a newline).
   */
  result(aborted: boolean): StreamedResult {
    // Held-back text at the end is no line still being written: never partial.
    if (!this.stopper.finishReason) this.emit(this.stopper.flush(), this.startedAt);
    if (!this.finish && !aborted) throw new ServerError('the server cut the stream off before the end of the answer', true);
    const ends = this.tokenTextEnds;
    let kept = ends.findIndex((_, i) => (i === 0 ? 0 : ends[i - 1]) >= this.text.length);
    if (kept < 0) kept = ends.length;
    else if (this.finish !== 'eos') kept++;
    const seq: Sequence = {
      text: this.text,
      finishReason: this.finish ?? 'length',
      logprob: Number.NaN,
      tokens: [],
      tokenLogprobs: this.tokenLogprobs.slice(0, kept),
      tokenTextEnds: ends.slice(0, kept),
    };
    return { seq, stats: this.stats, streamedTokens: this.tokenLogprobs.length };
  }

  private emit(delta: string, now: number): void {
    if (!delta) return;
    this.text += delta;
    this.onText?.(delta);
    // The line and its tokens as the local engine reports them.
    const line = this.onFirstLine ? firstLineToShow(this.text, this.tokenLogprobs, this.tokenTextEnds, now - this.startedAt, this.opts.partialLineMs) : null;
    if (this.onFirstLine && line) {
      this.onFirstLine(line);
      this.onFirstLine = undefined;
    }
  }
}
