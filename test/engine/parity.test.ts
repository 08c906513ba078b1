import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { TINY, TINY_FUSED, argmax, loadReference, maxAbsDiff } from '../helpers';

for (const [graph, dir] of [
  ['torch.onnx', TINY],
  ['ghostline convert (lean)', TINY_FUSED],
])
  test(`prefill plus 20 decode steps match the PyTorch reference (max abs diff < 1e-4), ${graph} graph`, async () => {
    const ref = loadReference();
    const folder = readModelFolder(dir);
    const model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
    try {
      let r = await model.forward([ref.prompt_ids], model.emptyCache());
      assert.ok(maxAbsDiff(r.logits, ref.rows[0]) < 1e-4, `prefill diff ${maxAbsDiff(r.logits, ref.rows[0])}`);
      assert.equal(argmax(r.logits), ref.greedy_tokens[0]);
      for (let step = 1; step <= 20; step++) {
        r = await model.forward([[ref.greedy_tokens[step - 1]]], r.cache);
        const diff = maxAbsDiff(r.logits, ref.rows[step]);
        assert.ok(diff < 1e-4, `decode step ${step}: max abs diff ${diff}`);
        assert.equal(argmax(r.logits), ref.greedy_tokens[step], `greedy token at step ${step}`);
      }
      assert.equal(r.cache.length, ref.prompt_ids.length + 20);
    } finally {
      await model.release();
    }
  });

test('the JS tokenizer encodes exactly as the Python trainer did', () => {
  const ref = JSON.parse(fs.readFileSync(path.join(TINY, 'reference.json'), 'utf8'));
  const folder = readModelFolder(TINY);
  const tok = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
  assert.deepEqual(tok.encode(ref.prompt), ref.prompt_ids);
  for (const sample of ref.tokenizer_samples as { text: string; ids: number[] }[]) {
    assert.deepEqual(tok.encode(sample.text), sample.ids, JSON.stringify(sample.text));
    assert.equal(tok.decode(sample.ids), sample.text, 'decode round-trips');
  }
  assert.ok(tok.specialIds.has(tok.tokenId('<fim_middle>')!));
});
