import type { CompletionOutcome } from './types';

/** Running numbers for the status bar and "Show Stats": latencies, sources, KV reuse, accepts. */
export class SessionStats {
  requests = 0;
  shown = 0;
  accepted = 0;
  bySource: Record<string, number> = { cache: 0, inflight: 0, model: 0, none: 0 };
  promptTokens = 0;
  reusedTokens = 0;
  lastLatencyMs: number | null = null;
  lastReuse: number | null = null;
  /** Suggestions the confidence gate held back. */
  gated = 0;
  /** The last scored suggestion's estimated probability of being kept. */
  lastConfidence: number | null = null;
  /** The last prompt's share of the tokens it could have used. */
  lastFill: number | null = null;
  /** The server the last model answer came from (null: the local engine), and its own timings. */
  lastServer: { name: string; prefillMs: number; decodeMs: number; promptTokens: number; cachedTokens: number } | null = null;
  /** The backend in use, as the user would name it ("local", "llama.cpp at http://...", "local (server down)"). */
  backend = 'local';
  private latencies: number[] = [];

  /** `server`: the name of the server that answered, when one did. */
  record(o: CompletionOutcome, server?: string): void {
    this.requests++;
    this.bySource[o.source]++;
    if (o.items.length > 0) this.shown++;
    if (o.gated) this.gated++;
    if (o.cancelled) return;
    if (o.confidence !== null) this.lastConfidence = o.confidence;
    if (o.fill !== undefined) this.lastFill = o.fill;
    this.lastLatencyMs = o.latencyMs;
    this.latencies.push(o.latencyMs);
    if (this.latencies.length > 200) this.latencies.shift();
    if (o.stats && o.stats.promptTokens > 0) {
      this.promptTokens += o.stats.promptTokens;
      this.reusedTokens += o.stats.reusedTokens;
      this.lastReuse = o.stats.reusedTokens / o.stats.promptTokens;
    }
    if (o.source === 'model' && o.stats) {
      const { prefillMs, decodeMs, promptTokens, reusedTokens } = o.stats;
      this.lastServer = server ? { name: server, prefillMs, decodeMs, promptTokens, cachedTokens: reusedTokens } : null;
    }
  }

  percentile(p: number): number | null {
    if (this.latencies.length === 0) return null;
    const s = [...this.latencies].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  }

  summary(): string {
    const ms = (v: number | null) => (v === null ? 'n/a' : `${Math.round(v)} ms`);
    const reuse = this.promptTokens > 0 ? `${Math.round((100 * this.reusedTokens) / this.promptTokens)}%` : 'n/a';
    return [
      `requests: ${this.requests} (model ${this.bySource.model}, cache ${this.bySource.cache}, reused in-flight ${this.bySource.inflight})`,
      `suggestions shown: ${this.shown}, accepted: ${this.accepted}, held back as unlikely to be kept: ${this.gated}`,
      `last suggestion: ${this.lastConfidence === null ? 'n/a' : `${Math.round(this.lastConfidence * 100)}% likely to be kept`}, prompt fill ${this.lastFill === null ? 'n/a' : `${Math.round(this.lastFill * 100)}%`}`,
      `latency p50 ${ms(this.percentile(50))}, p95 ${ms(this.percentile(95))}, last ${ms(this.lastLatencyMs)}`,
      `KV cache reuse: ${reuse} of prompt tokens`,
      `backend: ${this.backend}`,
      ...(this.lastServer ? [`last server answer: ${serverTimings(this.lastServer)}`] : []),
    ].join('\n');
  }
}

function serverTimings(s: NonNullable<SessionStats['lastServer']>): string {
  return `prompt ${Math.round(s.prefillMs)} ms (${s.promptTokens} tokens, ${s.cachedTokens} cached), generation ${Math.round(s.decodeMs)} ms`;
}
