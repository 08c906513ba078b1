/**
 * llama.vscode's speculative prefetch: after a suggestion the user sees, the one that would follow its acceptance
 * is computed while they read, so Tab then Tab answers from the cache. One at a time: a prefetch never queues
 * behind another, and a failed one is forgotten (it was only a guess).
 */
export class Prefetcher {
  private running: Promise<unknown> | null = null;

  /** Whether a prefetch is running (the line below is not warmed meanwhile: accepting is the likelier step). */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Starts `run` unless one is running. */
  start(run: () => Promise<unknown>): void {
    if (this.running) return;
    this.running = run()
      .catch(() => undefined)
      .finally(() => (this.running = null));
  }

  /** Resolves when the running prefetch (if any) is done: for tests and benchmarks. */
  async idle(): Promise<void> {
    await this.running;
  }
}
