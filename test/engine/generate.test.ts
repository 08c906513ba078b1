import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Engine } from '../../src/engine/worker/engine';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TINY, TINY_FUSED, copyModel, loadReference } from '../helpers';

const ref = loadReference();
let engine: Engine;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1 });
});
after(async () => engine.dispose());

test('greedy generation follows the reference tokens and says why it finished', async () => {
  const r = await engine.generate(ref.prompt, { maxNewTokens: 20, stopOnSpecialTokens: false });
  assert.deepEqual(r.tokens, ref.greedy_tokens.slice(0, 20));
  assert.equal(r.finishReason, 'length');
  assert.equal(r.stats.generatedTokens, 20);
  assert.equal(r.text, engine.tokenizer.decode(ref.greedy_tokens.slice(0, 20)));
});

test('each token carries its log-probability under the model (torch reference) and where its text ends', async () => {
  const r = await engine.generate(ref.prompt, { maxNewTokens: 12, stopOnSpecialTokens: false });
  assert.equal(r.tokenLogprobs.length, 12);
  for (const [i, lp] of r.tokenLogprobs.entries()) {
    const row = ref.rows[i];
    const m = Math.max(...row);
    const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
    assert.ok(Math.abs(lp - (row[r.tokens[i]] - lse)) < 1e-3, `token ${i}: ${lp} vs torch ${row[r.tokens[i]] - lse}`);
  }
  // Ends are non-decreasing and the last one covers the whole text.
  assert.equal(r.tokenTextEnds.length, 12);
  for (let i = 1; i < 12; i++) assert.ok(r.tokenTextEnds[i] >= r.tokenTextEnds[i - 1]);
  assert.equal(r.tokenTextEnds[11], r.text.length);
  // Speculative decoding takes the same tokens from multi-row passes: the same log-probabilities.
  const spec = await engine.generate(ref.prompt, { maxNewTokens: 12, stopOnSpecialTokens: false, speculativeTokens: 4 });
  assert.deepEqual(spec.tokens, r.tokens);
  for (const [i, lp] of spec.tokenLogprobs.entries()) assert.ok(Math.abs(lp - r.tokenLogprobs[i]) < 1e-3);
  // Beam search reports per-token log-probabilities that sum to the sequence's.
  const beams = await engine.generate(ref.prompt, { maxNewTokens: 6, numBeams: 3, numReturnSequences: 2, stopOnSpecialTokens: false });
  for (const q of beams.sequences) {
    assert.equal(q.tokenLogprobs.length, q.tokens.length);
    assert.ok(Math.abs(q.tokenLogprobs.reduce((a, b) => a + b, 0) - q.logprob) < 1e-3);
  }
});

test('an EOS id from generation_config.json ends generation there, with finishReason eos', async () => {
  // A copy of the model whose generation_config names the 3rd greedy token as EOS: greedy decoding must stop
  // on it (the EOS token itself is not part of the output).
  const stopAt = ref.greedy_tokens[2];
  assert.ok(!ref.greedy_tokens.slice(0, 2).includes(stopAt), 'the fixture reaches that token first at step 3');
  const dir = copyModel();
  try {
    fs.writeFileSync(path.join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: stopAt }));
    const e = await Engine.load(dir, { threads: 1 });
    try {
      assert.ok(e.info.eosIds.includes(stopAt));
      const r = await e.generate(ref.prompt, { maxNewTokens: 20, stopOnSpecialTokens: false });
      assert.equal(r.finishReason, 'eos');
      assert.deepEqual(r.tokens, ref.greedy_tokens.slice(0, 2));
      // ignoreEos runs through it.
      const through = await e.generate(ref.prompt, { maxNewTokens: 5, stopOnSpecialTokens: false, ignoreEos: true });
      assert.equal(through.finishReason, 'length');
      assert.deepEqual(through.tokens, ref.greedy_tokens.slice(0, 5));
    } finally {
      await e.dispose();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stop string spanning token boundaries cuts the text before it', async () => {
  const full = await engine.generate(ref.prompt, { maxNewTokens: 20, stopOnSpecialTokens: false });
  const pieces = full.tokens.map((t) => engine.tokenizer.decode([t]));
  // A stop string made of the end of token 5 and the start of token 6.
  const before = pieces.slice(0, 5).join('');
  const stop = pieces[4].slice(-1) + pieces[5].slice(0, 1);
  const expected = full.text.slice(0, full.text.indexOf(stop));
  assert.ok(expected.length <= before.length);
  const streamed: string[] = [];
  const r = await engine.generate(ref.prompt, { maxNewTokens: 20, stop: [stop], stopOnSpecialTokens: false }, { onText: (d) => streamed.push(d) });
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.text, expected);
  assert.equal(streamed.join(''), expected, 'the stream never showed part of the stop string');
});

test('maxLines 1 stops at the first newline', async () => {
  const r = await engine.generate(ref.prompt, { maxNewTokens: 20, maxLines: 1, stopOnSpecialTokens: false });
  const full = await engine.generate(ref.prompt, { maxNewTokens: 20, stopOnSpecialTokens: false });
  assert.ok(full.text.includes('\n'));
  assert.equal(r.text, full.text.slice(0, full.text.indexOf('\n')));
  assert.equal(r.finishReason, 'stop');
});

test('sampling with the same seed gives the same text; another seed differs', async () => {
  const opts = { maxNewTokens: 30, temperature: 1.2, topK: 50, topP: 0.95, stopOnSpecialTokens: false };
  const a = await engine.generate(ref.prompt, { ...opts, seed: 7 });
  const b = await engine.generate(ref.prompt, { ...opts, seed: 7 });
  const c = await engine.generate(ref.prompt, { ...opts, seed: 8 });
  assert.equal(a.text, b.text);
  assert.notEqual(a.text, c.text);
});

test('beam search returns distinct n-best sequences, best first', async () => {
  const r = await engine.generate(ref.prompt, { maxNewTokens: 8, numBeams: 4, numReturnSequences: 3, stopOnSpecialTokens: false });
  assert.equal(r.sequences.length, 3);
  assert.equal(new Set(r.sequences.map((s) => s.text)).size, 3);
  const scores = r.sequences.map((s) => s.logprob / Math.max(1, s.tokens.length));
  for (let i = 1; i < scores.length; i++) assert.ok(scores[i] <= scores[i - 1] + 1e-9);
  assert.equal(r.text, r.sequences[0].text);
  // The beam's best scores at least as well as the greedy path. Neither meets EOS within 8 tokens on this
  // fixture, so both have the same length and their log-probabilities compare directly.
  const greedy = await engine.generate(ref.prompt, { maxNewTokens: 8, stopOnSpecialTokens: false });
  const best = r.sequences[0];
  assert.equal(greedy.finishReason, 'length');
  assert.equal(best.finishReason, 'length');
  assert.equal(greedy.tokens.length, 8);
  assert.equal(best.tokens.length, 8);
  // Both scored afresh by a model of their own, not by the numbers the decoders report.
  const greedyLogprob = await beamlessLogprob(greedy.tokens);
  const bestLogprob = await beamlessLogprob(best.tokens);
  assert.ok(Math.abs(best.logprob - bestLogprob) < 1e-3, `beam reports ${best.logprob}, the model gives ${bestLogprob}`);
  assert.ok(bestLogprob >= greedyLogprob - 1e-4, `beam's best ${bestLogprob} < greedy's ${greedyLogprob}`);
  // The prompt's cache survives beam search.
  const after = await engine.generate(ref.prompt, { maxNewTokens: 2 });
  assert.equal(after.stats.prefillTokens, 1);
});

/** The log-probability of `tokens` after the prompt, one token at a time through a fresh model (no cache reuse, no beams). */
async function beamlessLogprob(tokens: number[]): Promise<number> {
  const { OnnxCausalLM } = await import('../../src/engine/model/onnxModel');
  const { KvCache } = await import('../../src/engine/model/kvCache');
  const { logSoftmaxRow } = await import('../../src/engine/decode/logSoftmax');
  const model = await OnnxCausalLM.load(engine.folder.onnxPath, engine.folder.config, { threads: 1 });
  try {
    let r = await model.forward([engine.tokenize(ref.prompt)], KvCache.empty(model.contract));
    let total = 0;
    const lp = new Float32Array(model.contract.vocab);
    for (const t of tokens) {
      total += logSoftmaxRow(r.logits, 0, model.contract.vocab, lp)[t];
      r = await model.forward([[t]], r.cache);
    }
    return total;
  } finally {
    await model.release();
  }
}

test('speculative sampling: near-zero temperature gives the greedy text, and the cache stays consistent', async () => {
  const p = ref.prompt; // the random fixture accepts a few drafts here, and rejects most
  const greedy = await engine.generate(p, { maxNewTokens: 40, ignoreEos: true });
  const sampled = await engine.generate(p, { maxNewTokens: 40, ignoreEos: true, temperature: 1e-4, topK: 8, speculativeTokens: 6 });
  assert.deepEqual(sampled.tokens, greedy.tokens);
  assert.ok(sampled.stats.acceptedDraftTokens > 0, 'drafts were accepted while sampling');
  // At a real temperature the tokens differ from plain sampling's (other draws) but stay valid and seeded.
  const warm = { maxNewTokens: 30, ignoreEos: true, temperature: 0.8, topK: 20, seed: 3, speculativeTokens: 6 };
  const a = await engine.generate(p, warm);
  const b = await engine.generate(p, warm);
  assert.deepEqual(a.tokens, b.tokens, 'same seed, same text');
  assert.equal(a.tokens.length, 30);
  const again = await engine.generate(p + a.text.slice(0, 5), { maxNewTokens: 5, ignoreEos: true });
  engine.resetCache();
  const cold = await engine.generate(p + a.text.slice(0, 5), { maxNewTokens: 5, ignoreEos: true });
  assert.deepEqual(again.tokens, cold.tokens);
});

test('speculative decoding on the lean graph gives the plain greedy tokens (tiny fixture)', async () => {
  const fused = await Engine.load(TINY_FUSED, { threads: 1 });
  try {
    let accepted = 0;
    for (const p of [ref.prompt, 'x = 1\ny = 2\nx = 1\ny = 2\nx = 1\n']) {
      const plain = await fused.generate(p, { maxNewTokens: 40, ignoreEos: true });
      assert.deepEqual(
        plain.tokens.slice(0, 20),
        (await engine.generate(p, { maxNewTokens: 20, ignoreEos: true })).tokens,
        'same greedy tokens as the traced graph',
      );
      fused.resetCache();
      const fast = await fused.generate(p, { maxNewTokens: 40, ignoreEos: true, speculativeTokens: 6 });
      assert.deepEqual(fast.tokens, plain.tokens);
      accepted += fast.stats.acceptedDraftTokens;
    }
    assert.ok(accepted > 0);
  } finally {
    await fused.dispose();
  }
});

test('prompt-lookup speculative decoding gives exactly the greedy output', async () => {
  const prompts = [ref.prompt, 'x = 1\ny = 2\nx = 1\ny = 2\nx = 1\n', 'def f(a):\n    return a\n\ndef g(a):\n    return a\n\ndef h(a):\n'];
  let accepted = 0;
  for (const p of prompts) {
    const plain = await engine.generate(p, { maxNewTokens: 40, ignoreEos: true });
    const fast = await engine.generate(p, { maxNewTokens: 40, ignoreEos: true, speculativeTokens: 6 });
    assert.deepEqual(fast.tokens, plain.tokens, JSON.stringify(p.slice(0, 20)));
    assert.equal(fast.text, plain.text);
    assert.ok(fast.stats.draftTokens >= fast.stats.acceptedDraftTokens);
    accepted += fast.stats.acceptedDraftTokens;
    // The cache after speculation holds exactly what was fed: a follow-up request reuses it correctly.
    const again = await engine.generate(p + plain.text.slice(0, 5), { maxNewTokens: 5, ignoreEos: true });
    engine.resetCache();
    const cold = await engine.generate(p + plain.text.slice(0, 5), { maxNewTokens: 5, ignoreEos: true });
    assert.deepEqual(again.tokens, cold.tokens);
  }
  assert.ok(accepted > 0, 'some draft tokens were accepted on repetitive text');
});
