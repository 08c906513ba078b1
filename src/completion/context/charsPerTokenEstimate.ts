import { LRUCache } from 'lru-cache';

/** An observation moves the estimate only when it differs by at least this many characters per token. */
const HYSTERESIS = 0.5;
/** Prompts shorter than this say little about a file's text. */
const MIN_TOKENS = 64;

/**
 * Characters per token for sizing prompts, per file: the tokenizer's measured ratio until prompts of that
 * file have been tokenized, then what they really gave (dense tables and long identifiers pack far more
 * characters per token than average code). The value is quantised to quarters and moves only on a clear
 * change, so the window budget, and with it the KV cache, stays put from one keystroke to the next.
 */
export class CharsPerTokenEstimate {
  private readonly perFile = new LRUCache<string, number>({ max: 64 });

  constructor(private readonly measured: number) {}

  get(path: string): number {
    return this.perFile.get(path) ?? this.measured;
  }

  /** Records a prompt of `chars` characters of document text that tokenized to `tokens` tokens. */
  observe(path: string, chars: number, tokens: number): void {
    if (tokens < MIN_TOKENS || !(chars > 0)) return;
    const seen = Math.round((chars / tokens) * 4) / 4;
    const bounded = Math.min(this.measured * 2.5, Math.max(this.measured * 0.8, seen));
    if (Math.abs(bounded - this.get(path)) >= HYSTERESIS) this.perFile.set(path, bounded);
  }
}
