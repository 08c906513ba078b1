import type { BackendHooks, Generator } from '../completion/generator';
import type { DecodeOptions } from '../engine/shared/decodeOptions';
import type { Prompt } from '../engine/shared/prompt';
import type { GenerateResult } from '../engine/shared/types';
import { ServerError } from './serverErrors';
import type { ServerHealth } from './serverHealth';

/**
 * A server generator that records each outcome in a ServerHealth and, while the server is in backoff,
 * fails at once with the last error instead of sending a request that would wait for its timeout.
 */
export class HealthCheckedGenerator implements Generator {
  constructor(
    private readonly inner: Generator,
    readonly health: ServerHealth,
  ) {}

  async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks?: BackendHooks): Promise<GenerateResult> {
    this.check();
    return this.track(this.inner.generate(prompt, options, hooks));
  }

  async prefill(prompt: Prompt, hooks?: BackendHooks): Promise<void> {
    if (!this.inner.prefill) return;
    this.check();
    await this.track(this.inner.prefill(prompt, hooks));
  }

  private check(): void {
    if (this.health.available()) return;
    const seconds = Math.ceil(this.health.retryInMs() / 1000);
    const last = this.health.lastError?.message ?? 'it failed';
    throw new ServerError(`the server is unavailable (${last}); trying again in ${seconds} s`, true);
  }

  private async track<T>(p: Promise<T>): Promise<T> {
    try {
      const r = await p;
      // A cancelled request says nothing about the server.
      if (!isCancelled(r)) this.health.succeeded();
      return r;
    } catch (err) {
      this.health.failed(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }
}

function isCancelled(r: unknown): boolean {
  return typeof r === 'object' && r !== null && (r as GenerateResult).finishReason === 'cancelled';
}
