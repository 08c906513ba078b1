import type { DecodeOptions } from './decodeOptions';
import { endsInLongLoop, repeatsStatementAbove, thirdIdenticalLine } from './loopCheck';
import type { FinishReason } from './types';

/**
 * Text-level stop rules: stop strings (matched on decoded text, so they may span tokens), a line limit
 * (the newline stop), the time budget and loops (`stopOnLoop`: a statement repeated on the next line, a
 * line that loops on; loopCheck.ts). Text that could still be the start of a stop string is held back
 * until it cannot be, so a caller never sees part of a stop string.
 */
export class TextStopper {
  private text = '';
  /** Length of text already released to the caller. */
  private released = 0;
  private readonly holdBack: number;
  finishReason: FinishReason | null = null;

  constructor(
    private readonly opts: Pick<DecodeOptions, 'stop' | 'maxLines' | 'timeBudgetMs'> & { stopOnLoop?: boolean },
    private readonly startedAt: number,
  ) {
    this.holdBack = opts.stop.reduce((most, s) => Math.max(most, s.length - 1), 0);
  }

  /** Adds decoded text; returns the part that is now safe to release. Sets finishReason when a rule fires. */
  push(delta: string, now: number): string {
    if (this.finishReason) return '';
    const searchFrom = Math.max(0, this.text.length - this.holdBack);
    this.text += delta;
    let cut = this.text.length;
    for (const s of this.opts.stop) {
      const at = this.text.indexOf(s, Math.max(0, searchFrom - s.length + 1));
      if (at >= 0 && at < cut) {
        cut = at;
        this.finishReason = 'stop';
      }
    }
    if (this.opts.maxLines > 0) {
      const end = nthNewline(this.text, this.opts.maxLines);
      if (end >= 0 && end < cut) {
        cut = end;
        this.finishReason = 'stop';
      }
    }
    if (this.finishReason) {
      this.text = this.text.slice(0, cut);
      return this.release(this.text.length);
    }
    if (this.opts.stopOnLoop && this.loops(delta)) {
      this.finishReason = 'loop';
      return this.release(this.text.length);
    }
    // llama.cpp's t_max_predict_ms: the budget applies once the first line is complete.
    if (this.opts.timeBudgetMs > 0 && now - this.startedAt > this.opts.timeBudgetMs && this.text.includes('\n')) {
      this.finishReason = 'time';
      return this.release(this.text.length);
    }
    return this.release(this.safeEnd());
  }

  /** Releases everything still held (generation ended for another reason). */
  flush(): string {
    return this.release(this.text.length);
  }

  get fullText(): string {
    return this.text;
  }

  /**
   * Whether the text, `delta` just added, has fallen into a loop: a line it completed repeats the one above,
   * or the line being written has looped on for LOOP_STOP_CHARS characters.
   */
  private loops(delta: string): boolean {
    if (endsInLongLoop(this.text.slice(this.text.lastIndexOf('\n') + 1))) return true;
    const completed = delta.split('\n').length - 1;
    if (completed === 0) return false;
    const lines = this.text.split('\n');
    const last = lines.length - 1;
    for (let i = Math.max(1, last - completed); i < last; i++) if (repeatsStatementAbove(lines, i) || thirdIdenticalLine(lines, i)) return true;
    return false;
  }

  /** End of the text that cannot be the start of any stop string. */
  private safeEnd(): number {
    let end = this.text.length;
    for (const s of this.opts.stop) {
      for (let k = Math.min(s.length - 1, this.text.length); k > 0; k--) {
        if (this.text.endsWith(s.slice(0, k))) {
          end = Math.min(end, this.text.length - k);
          break;
        }
      }
    }
    return end;
  }

  private release(end: number): string {
    if (end <= this.released) return '';
    const out = this.text.slice(this.released, end);
    this.released = end;
    return out;
  }
}

/** Index of the n-th '\n' (1-based), or -1. */
function nthNewline(text: string, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = text.indexOf('\n', at + 1);
    if (at < 0) return -1;
  }
  return at;
}
