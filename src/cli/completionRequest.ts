import type { CompletionService } from '../completion/completionService';
import { positionAt, textSource } from '../completion/context/documentContext';
import { RequestError } from '../engine/shared/errors';

const FIELDS = ['id', 'prefix', 'suffix', 'language', 'path', 'explicit'];

/**
 * A serve-stdio request in editor terms, `{"id", "prefix", "suffix", "language", "path"}`: runs the exact
 * inline-completion pipeline (context, cache, in-flight reuse, filters) as the VS Code provider does.
 */
export async function handleCompletionRequest(service: CompletionService, r: Record<string, unknown>): Promise<Record<string, unknown>> {
  for (const key of Object.keys(r)) if (!FIELDS.includes(key)) throw new RequestError(`unknown request field ${JSON.stringify(key)}`);
  const prefix = r.prefix;
  const suffix = r.suffix ?? '';
  if (typeof prefix !== 'string' || typeof suffix !== 'string') throw new RequestError('"prefix" and "suffix" must be strings');
  const text = prefix + suffix;
  const outcome = await service.complete({
    doc: textSource(text),
    cursor: positionAt(text, prefix.length),
    languageId: typeof r.language === 'string' ? r.language : 'plaintext',
    path: typeof r.path === 'string' ? r.path : 'untitled',
    explicit: r.explicit === true,
  });
  const s = outcome.stats;
  return {
    id: r.id ?? null,
    text: outcome.items[0] ?? '',
    raw_text: outcome.raw,
    items: outcome.items,
    source: outcome.source,
    mode: outcome.mode,
    finish_reason: outcome.cancelled ? 'cancelled' : outcome.items.length > 0 ? 'ok' : outcome.gated ? 'gated' : 'empty',
    confidence: outcome.confidence === null ? null : Math.round(outcome.confidence * 1000) / 1000,
    ...(outcome.fill !== undefined ? { fill: Math.round(outcome.fill * 1000) / 1000 } : {}),
    prompt_tokens: s?.promptTokens ?? 0,
    reused_tokens: s?.reusedTokens ?? 0,
    prefill_tokens: s?.prefillTokens ?? 0,
    generated_tokens: s?.generatedTokens ?? 0,
    prefill_ms: round(s?.prefillMs ?? 0),
    decode_ms: round(s?.decodeMs ?? 0),
    total_ms: round(outcome.latencyMs),
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
