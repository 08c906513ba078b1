/** How much of the worker's output is kept for the exit message: enough for a loader's or an abort's message. */
const KEEP_LINES = 3;
const MAX_LINE_CHARS = 500;

/**
 * Splits a worker's output into lines and remembers the last few, so that "the inference worker exited
 * (code 1)" can say what the worker said before it went.
 */
export class OutputTail {
  private partial = '';
  private readonly last: string[] = [];

  /** Complete lines of `chunk` (with what was left of the previous one), empty lines dropped. */
  push(chunk: string): string[] {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE_CHARS * 4);
    const lines = parts.map((l) => l.trimEnd()).filter((l) => l.length > 0);
    for (const l of lines) {
      this.last.push(l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}…` : l);
      if (this.last.length > KEEP_LINES) this.last.shift();
    }
    return lines;
  }

  /** `reason` with the worker's last words appended, where it had any. */
  explain(reason: string): string {
    const rest = this.partial.trim();
    const said = rest ? [...this.last, rest.slice(0, MAX_LINE_CHARS)].slice(-KEEP_LINES) : this.last;
    return said.length > 0 ? `${reason}; its last output: ${said.join(' | ')}` : reason;
  }
}
