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

test('healing takes back the last token and allows exactly the tokens that extend its text or begin it', () => {
  const prompt = 'def f(x):\n    ret';
  const ids = tokenizer.encode(prompt);
  const h = planHealing(prompt, ids, tokenizer, index);
  assert.ok(h);
  assert.deepEqual(h.tokens, ids.slice(0, -1));
  assert.equal(h.text, tokenizer.decode(ids.slice(-1)));
  assert.ok(prompt.endsWith(h.text));
  assert.ok(h.allowed.includes(ids[ids.length - 1]), 'the original token stays possible');
  const fits = (t: string) => t.length > 0 && (t.startsWith(h.text) || h.text.startsWith(t));
  for (const id of h.allowed) assert.ok(fits(tokenizer.decode([id])), tokenizer.decode([id]));
  assert.ok(
    h.allowed.some((id) => tokenizer.decode([id]) === ' '),
    'a token covering only part of " ret" (the model may write " " + "ret")',
  );
  // Every token of the vocabulary that fits is allowed (the sorted index misses none).
  const all = [...Array(tokenizer.vocabSize).keys()].filter((id) => !tokenizer.specialIds.has(id) && fits(tokenizer.decode([id])));
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

test('a prompt ending in indentation is re-tokenized as the model saw indentation before a word', () => {
  // The byte-level BPE writes "    return" as "   " + " return": a prompt ending in a 4-space token is a
  // boundary the model never saw. The kept tokens end with "   " and only the last space is healed.
  for (const indent of ['    ', '        ', '  ']) {
    const prompt = `def f(x):\n${indent}`;
    const ids = tokenizer.encode(prompt);
    const h = planHealing(prompt, ids, tokenizer, index);
    assert.ok(h, JSON.stringify(indent));
    assert.equal(h.text, ' ');
    assert.equal(tokenizer.decode(h.tokens) + h.text, prompt);
    assert.deepEqual(tokenizer.encode(`${prompt}return`).slice(0, h.tokens.length), h.tokens, 'the prompt now tokenizes as text with a word after it');
    assert.ok(h.allowed.includes(tokenizer.encode(' return')[0]));
  }
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
  for (const prompt of ['def fibonacci(n):\n    ret', 'const value = some', 'x = [1, 2', 'def f(x):\n    ', 'if (x) {\n\t']) {
    for (const opts of [{ temperature: 0 }, { temperature: 0.8, topK: 20, seed: 5, speculativeTokens: 4 }, { numBeams: 3, numReturnSequences: 2 }]) {
      const r = await engine.generate(prompt, { maxNewTokens: 12, ignoreEos: true, tokenHealing: true, ...opts });
      const ids = engine.tokenize(prompt);
      const healed = planHealing(prompt, ids, engine.tokenizer, new TokenPrefixIndex(engine.tokenizer));
      const kept = healed ? healed.tokens : ids;
      // prompt + output text == decode(prompt tokens the model saw + tokens it generated)
      assert.equal(prompt + r.text, engine.tokenizer.decode([...kept, ...r.tokens]), JSON.stringify({ prompt, opts }));
      if (healed) assert.ok(engine.tokenizer.decode(r.tokens).startsWith(healed.text), 'the output covers the healed text first');
      assert.equal(r.stats.promptTokens, kept.length);
    }
  }
});
