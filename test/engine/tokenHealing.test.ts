import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { TokenPrefixIndex, planHealing, restrictTo } from '../../src/engine/decode/tokenHealing';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { ROOT, TINY } from '../helpers';

// The default model's real byte-level BPE tokenizer.
const folder = readModelFolder(defaultModelDir(ROOT));
const tokenizer = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
const index = new TokenPrefixIndex(tokenizer);

test('healing takes back the last token and allows exactly the tokens that extend its text', () => {
  const prompt = 'def f(x):\n    ret';
  const ids = tokenizer.encode(prompt);
  const h = planHealing(prompt, ids, tokenizer, index);
  assert.ok(h);
  assert.deepEqual(h.tokens, ids.slice(0, -1));
  assert.equal(h.text, tokenizer.decode(ids.slice(-1)));
  assert.ok(prompt.endsWith(h.text));
  assert.ok(h.allowed.includes(ids[ids.length - 1]), 'the original token stays possible');
  for (const id of h.allowed) assert.ok(tokenizer.decode([id]).startsWith(h.text), tokenizer.decode([id]));
  // Every token of the vocabulary that extends the text is allowed (the sorted index misses none).
  const all = [...Array(tokenizer.vocabSize).keys()].filter((id) => !tokenizer.specialIds.has(id) && tokenizer.decode([id]).startsWith(h.text));
  assert.deepEqual(
    [...h.allowed].sort((a, b) => a - b),
    all.filter((id) => !tokenizer.decode([id]).includes('\uFFFD')),
  );
  const masked = restrictTo(
    Float32Array.from({ length: tokenizer.vocabSize }, (_, i) => i),
    h.allowed,
  );
  assert.equal(masked.filter((x) => x > -Infinity).length, h.allowed.length);
});

test('no healing after a FIM marker or for a one-token prompt', () => {
  const fim = '<fim_prefix>a = 1\n<fim_suffix>\n<fim_middle>';
  assert.equal(planHealing(fim, tokenizer.encode(fim), tokenizer, index), null);
  assert.equal(planHealing('x', tokenizer.encode('x'), tokenizer, index), null);
});

let engine: Engine;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1 });
});
after(async () => engine.dispose());

test('a healed generation is the continuation of the prompt as the model wrote it', async () => {
  for (const prompt of ['def fibonacci(n):\n    ret', 'const value = some', 'x = [1, 2']) {
    for (const opts of [{ temperature: 0 }, { temperature: 0.8, topK: 20, seed: 5, speculativeTokens: 4 }]) {
      const r = await engine.generate(prompt, { maxNewTokens: 12, ignoreEos: true, tokenHealing: true, ...opts });
      const ids = engine.tokenize(prompt);
      const healed = planHealing(prompt, ids, engine.tokenizer, new TokenPrefixIndex(engine.tokenizer));
      const kept = healed ? healed.tokens : ids;
      // prompt + output text == decode(prompt tokens the model saw + tokens it generated)
      assert.equal(prompt + r.text, engine.tokenizer.decode([...kept, ...r.tokens]), JSON.stringify({ prompt, opts }));
      if (healed) assert.ok(engine.tokenizer.decode(r.tokens.slice(0, 1)).startsWith(healed.text), 'the first token extends the healed text');
      assert.equal(r.stats.promptTokens, kept.length);
    }
  }
});
