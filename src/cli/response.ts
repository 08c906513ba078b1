import type { GenerateResult } from '../engine/shared/types';

/** The serve-stdio / `generate --json` response: the contract scripts and benchmarks rely on. */
export function toResponse(id: unknown, r: GenerateResult): Record<string, unknown> {
  const s = r.stats;
  const out: Record<string, unknown> = {
    id,
    text: r.text,
    finish_reason: r.finishReason,
    prompt_tokens: s.promptTokens,
    reused_tokens: s.reusedTokens,
    prefill_tokens: s.prefillTokens,
    generated_tokens: s.generatedTokens,
    prefill_ms: round(s.prefillMs),
    decode_ms: round(s.decodeMs),
    total_ms: round(s.totalMs),
  };
  if (s.truncatedTokens > 0) out.truncated_tokens = s.truncatedTokens;
  if (r.notices?.length) out.notices = r.notices;
  if (r.sequences.length > 1) {
    out.sequences = r.sequences.map((q) => ({ text: q.text, finish_reason: q.finishReason, logprob: q.logprob }));
  }
  return out;
}

export function errorResponse(id: unknown, message: string): Record<string, unknown> {
  return { id, text: '', finish_reason: 'error', error: message };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
