import * as fs from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../src/engine/worker/engine';
import { median, percentile, round } from './stats';

export interface EngineBenchResult {
  model: string;
  threads: number;
  prefill_tokens_per_s: number;
  prefill_tokens: number;
  decode_ms_per_token_p50: number;
  decode_ms_per_token_spread: [number, number];
  speculative: { prompts: number; equal_output_prompts: number; plain_ms: number; speculative_ms: number; speedup: number; accepted_share: number };
  /** The inline preset's sampling (temperature 0.2, top-k 8): texts differ, so time per generated token. */
  speculative_sampled: { prompts: number; plain_ms_per_token: number; speculative_ms_per_token: number; speedup: number; accepted_share: number };
  typing: {
    keystrokes: number;
    median_prefill_tokens: number;
    p95_prefill_tokens: number;
    reused_share: number;
    median_total_ms: number;
    p95_total_ms: number;
  };
}

/**
 * Engine-level numbers: cold prefill throughput, decode time per token, and a scripted typing sequence
 * (a real source file typed character by character, the prompt being the text so far) that shows how much
 * of each prompt the KV cache reuse saves.
 */
export async function engineBench(modelDir: string, sourceFile: string, opts: { threads: number; quick: boolean }): Promise<EngineBenchResult> {
  const engine = await Engine.load(modelDir, { threads: opts.threads });
  try {
    const source = fs.readFileSync(sourceFile, 'utf8');
    const ctx = engine.info.contextLength;
    // Cold prefill of a prompt filling about half the context.
    const ids = engine.tokenize(source);
    const target = Math.min(ids.length, Math.floor(ctx / 2));
    const prompt = engine.tokenizer.decode(ids.slice(0, target));
    const prefill: number[] = [];
    for (let i = 0; i < (opts.quick ? 3 : 7); i++) {
      engine.resetCache();
      const r = await engine.generate(prompt, { maxNewTokens: 1 });
      prefill.push(r.stats.prefillTokens / (r.stats.prefillMs / 1000));
    }
    // Decode: greedy, fixed token count.
    const decode: number[] = [];
    for (let i = 0; i < (opts.quick ? 3 : 7); i++) {
      const r = await engine.generate(prompt, { maxNewTokens: 64, stopOnSpecialTokens: false, repetitionPenalty: 1.3 });
      if (r.stats.generatedTokens > 1) decode.push(r.stats.decodeMs / r.stats.generatedTokens);
    }
    // Prompt-lookup speculative decoding on real code: same greedy output, time compared.
    let plainMs = 0;
    let specMs = 0;
    let equal = 0;
    let drafted = 0;
    let accepted = 0;
    const nPrompts = opts.quick ? 4 : 12;
    const prompts = Array.from({ length: nPrompts }, (_, k) => {
      const at = Math.floor(((k + 1) * source.length) / (nPrompts + 1));
      return source.slice(Math.max(0, at - 1500), at);
    });
    for (const p of prompts) {
      engine.resetCache();
      const a = await engine.generate(p, { maxNewTokens: 64 });
      engine.resetCache();
      const b = await engine.generate(p, { maxNewTokens: 64, speculativeTokens: 8 });
      if (a.text === b.text) equal++;
      plainMs += a.stats.decodeMs;
      specMs += b.stats.decodeMs;
      drafted += b.stats.draftTokens;
      accepted += b.stats.acceptedDraftTokens;
    }
    // The same with the inline preset's sampling, several seeds per prompt.
    const sampled = { plainMs: 0, plainTokens: 0, specMs: 0, specTokens: 0, drafted: 0, accepted: 0 };
    for (const p of prompts) {
      for (let seed = 0; seed < 3; seed++) {
        const knobs = { maxNewTokens: 64, temperature: 0.2, topK: 8, topP: 0.95, seed };
        engine.resetCache();
        const a = await engine.generate(p, knobs);
        engine.resetCache();
        const b = await engine.generate(p, { ...knobs, speculativeTokens: 8 });
        sampled.plainMs += a.stats.decodeMs;
        sampled.plainTokens += a.stats.generatedTokens;
        sampled.specMs += b.stats.decodeMs;
        sampled.specTokens += b.stats.generatedTokens;
        sampled.drafted += b.stats.draftTokens;
        sampled.accepted += b.stats.acceptedDraftTokens;
      }
    }
    const plainPerToken = sampled.plainMs / Math.max(1, sampled.plainTokens);
    const specPerToken = sampled.specMs / Math.max(1, sampled.specTokens);
    // Typing: a window of the file typed one character at a time.
    const start = Math.floor(source.length / 3);
    const typed = source.slice(start, start + (opts.quick ? 150 : 600));
    const head = source.slice(Math.max(0, start - 2500), start);
    engine.resetCache();
    const prefills: number[] = [];
    const totals: number[] = [];
    let reused = 0;
    let promptTokens = 0;
    for (let i = 1; i <= typed.length; i++) {
      const r = await engine.generate(head + typed.slice(0, i), { maxNewTokens: 8, maxLines: 1 });
      if (i === 1) continue; // the first request fills the cache
      prefills.push(r.stats.prefillTokens);
      totals.push(r.stats.totalMs);
      reused += r.stats.reusedTokens;
      promptTokens += r.stats.promptTokens;
    }
    return {
      model: path.basename(modelDir),
      threads: engine.info.threads,
      prefill_tokens_per_s: round(median(prefill), 0),
      prefill_tokens: target,
      decode_ms_per_token_p50: round(median(decode)),
      decode_ms_per_token_spread: [round(Math.min(...decode)), round(Math.max(...decode))],
      speculative: {
        prompts: nPrompts,
        equal_output_prompts: equal,
        plain_ms: round(plainMs),
        speculative_ms: round(specMs),
        speedup: round(plainMs / specMs),
        accepted_share: round(accepted / Math.max(1, drafted), 3),
      },
      speculative_sampled: {
        prompts: nPrompts,
        plain_ms_per_token: round(plainPerToken, 3),
        speculative_ms_per_token: round(specPerToken, 3),
        speedup: round(plainPerToken / specPerToken),
        accepted_share: round(sampled.accepted / Math.max(1, sampled.drafted), 3),
      },
      typing: {
        keystrokes: prefills.length,
        median_prefill_tokens: median(prefills),
        p95_prefill_tokens: percentile(prefills, 95),
        reused_share: round(reused / promptTokens, 4),
        median_total_ms: round(median(totals)),
        p95_total_ms: round(percentile(totals, 95)),
      },
    };
  } finally {
    await engine.dispose();
  }
}
