import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Engine } from '../../src/engine/worker/engine';
import { special, text } from '../../src/engine/shared/prompt';
import { KvCache } from '../../src/engine/model/kvCache';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { TINY, maxAbsDiff } from '../helpers';

let engine: Engine;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1, prefillChunk: 16 });
});
after(async () => engine.dispose());

const base = 'import os\n\ndef fibonacci(n):\n    """Return the n-th number."""\n    if n < 2:\n        return n\n    return fib';

test('logits are the same with a reused, cropped cache and with a fresh prefill', async () => {
  const folder = readModelFolder(TINY);
  const model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
  try {
    const ids = engine.tokenize(base);
    const fresh = await model.forward([ids], KvCache.empty(model.contract));
    // Prefill a longer, diverging sequence, crop back to the shared prefix, then feed the rest in chunks.
    const other = await model.forward([ids.slice(0, 20).concat([5, 6, 7, 8, 9])], KvCache.empty(model.contract));
    let cache = other.cache.crop(20);
    assert.equal(cache.length, 20);
    let last = fresh.logits;
    for (let at = 20; at < ids.length; at += 7) {
      const r = await model.forward([ids.slice(at, at + 7)], cache);
      cache = r.cache;
      last = r.logits;
    }
    assert.ok(maxAbsDiff(last, fresh.logits) < 1e-4);
  } finally {
    await model.release();
  }
});

test('greedy output is the same with and without the reused cache', async () => {
  const prompts = [base, `${base}o`, `${base}onacci(n`, base.slice(0, 40), `${base}onacci(n - 1)`];
  for (const p of prompts) {
    const warm = await engine.generate(p, { maxNewTokens: 24 });
    engine.resetCache();
    const cold = await engine.generate(p, { maxNewTokens: 24 });
    assert.equal(cold.stats.reusedTokens, 0);
    assert.equal(warm.text, cold.text, `prompt ${JSON.stringify(p.slice(-20))}`);
    assert.deepEqual(warm.tokens, cold.tokens);
  }
});

test('a prompt extended by one character prefills only a few tokens', async () => {
  engine.resetCache();
  const first = await engine.generate(base, { maxNewTokens: 8 });
  assert.equal(first.stats.reusedTokens, 0);
  assert.equal(first.stats.prefillTokens, first.stats.promptTokens);
  let prompt = base;
  for (const ch of 'onacci(n - 1)') {
    prompt += ch;
    const r = await engine.generate(prompt, { maxNewTokens: 8 });
    assert.ok(r.stats.prefillTokens <= 3, `typing "${ch}" prefilled ${r.stats.prefillTokens} tokens`);
    assert.equal(r.stats.reusedTokens + r.stats.prefillTokens, r.stats.promptTokens);
  }
});

test('the same prompt twice runs only one token of prefill', async () => {
  await engine.generate(base, { maxNewTokens: 4 });
  const again = await engine.generate(base, { maxNewTokens: 4 });
  assert.equal(again.stats.prefillTokens, 1);
});

test('a prompt longer than the context keeps its end and still generates', async () => {
  const long = 'x = 1\n'.repeat(800); // ~1,600+ tokens for a 1,024-token context
  const r = await engine.generate(long, { maxNewTokens: 16 });
  assert.ok(r.stats.truncatedTokens > 0);
  assert.ok(r.stats.promptTokens + 16 <= engine.info.contextLength);
  assert.ok(r.stats.generatedTokens > 0);
});

test('a FIM prompt over the context keeps its FIM prefix marker and drops the oldest text after it', async () => {
  const fim = [special('<fim_prefix>'), text('x = 1\n'.repeat(800)), special('<fim_suffix>'), text('\nprint(x)\n'), special('<fim_middle>')];
  const r = await engine.generate(fim, { maxNewTokens: 8 });
  assert.ok(r.stats.truncatedTokens > 0);
  const ids = engine.cachedTokenIds;
  assert.equal(ids[0], engine.tokenizer.tokenId('<fim_prefix>'), 'the format marker survives the cut');
  assert.ok(!ids.slice(1).includes(engine.tokenizer.tokenId('<fim_prefix>')!));
  assert.ok(ids.includes(engine.tokenizer.tokenId('<fim_middle>')!), 'the end of the prompt is kept');
});

test('a prompt over the context, growing by one character, still reuses the cache', async () => {
  const long = 'value = compute(1)\n'.repeat(150);
  await engine.generate(long, { maxNewTokens: 8 });
  const r = await engine.generate(`${long}v`, { maxNewTokens: 8 });
  assert.ok(r.stats.truncatedTokens > 0);
  assert.ok(r.stats.prefillTokens <= 3, `prefilled ${r.stats.prefillTokens}`);
});
