import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { Engine } from '../../src/engine/worker/engine';
import { LeanKvCache } from '../../src/engine/model/leanCache';
import { OnnxCausalLM, type AnyKvCache } from '../../src/engine/model/onnxModel';
import { logSumExp } from '../../src/engine/decode/logSoftmax';
import { argmax, maxAbsDiff } from '../helpers';
import { CASES, CHECKPOINTS, checkpointReference, tempDir } from './checkpointFixtures';

// --quant fp32 must give PyTorch's logits (within 1e-4) and greedy tokens on every family's fixture, through
// the lean contract: chunked prefill, a cache that grows past its first capacity (256), decode steps.
const TOL = 1e-4;

for (const name of CASES) {
  describe(`convert --quant fp32: ${name} matches PyTorch`, () => {
    const ref = checkpointReference(name);
    const out = path.join(tempDir(`conv-${name}`), 'model');
    let model: OnnxCausalLM;

    before(async () => {
      const r = await convertCheckpoint({ from: path.join(CHECKPOINTS, name), out, quant: 'fp32' });
      const config = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'));
      model = await OnnxCausalLM.load(r.onnxFile, config, { threads: 1 });
    });
    after(async () => {
      await model.release();
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    });

    test('the graph is the lean contract', () => {
      assert.equal(model.contract.kind, 'lean');
      assert.ok(model.emptyCache() instanceof LeanKvCache);
      assert.equal(model.contract.hasLogitsLse, true);
    });

    test("the graph's logits_lse is each kept row's log-sum-exp", async () => {
      const r = await model.forward([ref.prompt_ids], model.emptyCache(), 3);
      const vocab = model.contract.vocab;
      assert.equal(r.lse?.length, 3);
      for (let i = 0; i < 3; i++) {
        const want = logSumExp(r.logits.subarray(i * vocab, (i + 1) * vocab));
        assert.ok(Math.abs(r.lse![i] - want) < 1e-4, `row ${i}: ${r.lse![i]} vs ${want}`);
      }
    });

    test(`prefill and decode steps: logits within ${TOL}, greedy tokens equal`, async () => {
      let r = await model.forward([ref.prompt_ids], model.emptyCache());
      assert.ok(maxAbsDiff(r.logits, ref.prefill_last_logits) < TOL, `prefill: ${maxAbsDiff(r.logits, ref.prefill_last_logits)}`);
      const greedy: number[] = [argmax(r.logits)];
      for (let step = 1; step < ref.greedy_ids.length; step++) {
        r = await model.forward([[greedy[step - 1]]], r.cache);
        if (step < ref.logits_by_step.length) {
          const d = maxAbsDiff(r.logits, ref.logits_by_step[step]);
          assert.ok(d < TOL, `step ${step}: max abs diff ${d}`);
        }
        greedy.push(argmax(r.logits));
      }
      assert.deepEqual(greedy, ref.greedy_ids);
      assert.equal(r.cache.length, ref.prompt_ids.length + ref.greedy_ids.length - 1);
    });

    test('a 300-token prompt in chunks of 128 (the cache grows past 256) gives the reference logits and tokens', async () => {
      let cache: AnyKvCache = model.emptyCache();
      let logits: Float32Array = new Float32Array();
      for (let at = 0; at < ref.long_prompt_ids.length; at += 128) {
        const r = await model.forward([ref.long_prompt_ids.slice(at, at + 128)], cache);
        cache = r.cache;
        logits = r.logits;
      }
      assert.ok(maxAbsDiff(logits, ref.long_prefill_last_logits) < TOL, `long prefill: ${maxAbsDiff(logits, ref.long_prefill_last_logits)}`);
      const greedy = [argmax(logits)];
      while (greedy.length < ref.long_greedy_ids.length) {
        const r = await model.forward([[greedy[greedy.length - 1]]], cache);
        cache = r.cache;
        greedy.push(argmax(r.logits));
      }
      assert.deepEqual(greedy, ref.long_greedy_ids);
    });

    test('a cropped cache refilled with other tokens gives the same logits as a fresh prefill', async () => {
      const ids = ref.prompt_ids;
      const other = await model.forward([ids.slice(0, 5).concat([3, 4, 5, 6, 7, 8])], model.emptyCache());
      const refill = await model.forward([ids.slice(5)], other.cache.crop(5));
      assert.ok(maxAbsDiff(refill.logits, ref.prefill_last_logits) < TOL);
    });
  });
}

describe('the engine on a converted model', () => {
  const name = 'qwen2';
  const ref = checkpointReference(name);
  const out = path.join(tempDir('conv-engine'), 'model');
  let engine: Engine;
  before(async () => {
    await convertCheckpoint({ from: path.join(CHECKPOINTS, name), out, quant: 'fp32' });
    engine = await Engine.load(out, { threads: 1 });
  });
  after(async () => {
    await engine.dispose();
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  });

  test('greedy generation with prompt-lookup speculation (multi-token verify and rollback) gives the reference tokens', async () => {
    assert.deepEqual(engine.tokenize(ref.prompt), ref.prompt_ids);
    const opts = { maxNewTokens: ref.greedy_ids.length, temperature: 0, ignoreEos: true, tokenHealing: false };
    const plain = await engine.generate(ref.prompt, { ...opts, speculativeTokens: 0 });
    const spec = await engine.generate(`${ref.prompt} `, { ...opts, speculativeTokens: 8 }); // another prompt in between
    const again = await engine.generate(ref.prompt, { ...opts, speculativeTokens: 8 });
    assert.deepEqual(plain.tokens, ref.greedy_ids);
    assert.deepEqual(again.tokens, ref.greedy_ids);
    assert.ok(again.stats.reusedTokens > 0, 'the second request reuses the cache');
    assert.ok(spec.tokens.length > 0);
  });

  test("token log-probabilities from the graph's log-sum-exp leave the padded columns out (torch reference)", async () => {
    const used = engine.tokenizer.vocabSize;
    assert.ok(used < ref.logits_by_step[0].length, 'the fixture has padded logit columns');
    const r = await engine.generate(ref.prompt, { maxNewTokens: ref.logits_by_step.length, temperature: 0, ignoreEos: true, tokenHealing: false });
    assert.deepEqual(r.tokens, ref.greedy_ids.slice(0, ref.logits_by_step.length));
    for (const [i, lp] of r.tokenLogprobs.entries()) {
      const row = ref.logits_by_step[i].slice(0, used);
      const want = row[r.tokens[i]] - logSumExp(row);
      assert.ok(Math.abs(lp - want) < 1e-4, `token ${i}: ${lp} vs torch ${want}`);
    }
  });

  test('beam search runs on the lean cache (batch rows gathered) and keeps the prompt cache', async () => {
    const opts = { maxNewTokens: 6, ignoreEos: true, tokenHealing: false, speculativeTokens: 0 };
    const greedy = await engine.generate(ref.prompt, { ...opts, temperature: 0 });
    const beams = await engine.generate(ref.prompt, { ...opts, numBeams: 3, numReturnSequences: 3 });
    assert.equal(beams.sequences.length, 3);
    assert.equal(new Set(beams.sequences.map((s) => s.tokens.join())).size, 3, 'three different beams');
    const scores = beams.sequences.map((s) => s.logprob / s.tokens.length);
    assert.ok(scores.every(Number.isFinite) && scores[0] >= scores[1] && scores[1] >= scores[2], `scores ${scores}`);
    // The prompt's cache survives beam search: the next greedy request reuses it and gives the same tokens.
    const after = await engine.generate(ref.prompt, { ...opts, temperature: 0 });
    assert.deepEqual(after.tokens, greedy.tokens);
  });
});
