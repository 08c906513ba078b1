/**
 * Turns a growing list of token ids into text deltas without ever emitting half a UTF-8 character.
 * A byte-level token can end inside a multi-byte character; the decoder then yields U+FFFD.
 * The vLLM/TGI scheme: decode a small window before and after the new tokens and emit the difference
 * only when it does not end in U+FFFD.
 */
export class StreamingDetokenizer {
  private ids: number[] = [];
  private prefixOffset = 0;
  private readOffset = 0;

  constructor(private readonly decode: (ids: number[]) => string) {}

  /** Adds one token; returns the text it completes ('' while a character is still incomplete). */
  push(id: number): string {
    this.ids.push(id);
    const before = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const after = this.decode(this.ids.slice(this.prefixOffset));
    if (after.length > before.length && !after.endsWith('\uFFFD')) {
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
      return after.slice(before.length);
    }
    return '';
  }

  /** Whatever is still held back (an incomplete character at the very end becomes U+FFFD). */
  flush(): string {
    const before = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const after = this.decode(this.ids.slice(this.prefixOffset));
    this.prefixOffset = this.readOffset = this.ids.length;
    return after.length > before.length ? after.slice(before.length) : '';
  }
}
