import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { TokenPrefixIndex, planHealing, restrictTo } from '../../src/engine/model/tokenHealing';
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
  assert.equal(h.text, ' ret', 'the byte-level BPE writes the last line as "   " + " ret"');
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

/**
 * tiny-llama's tokenizer on each prompt, read off by hand: `healed` is the end of the prompt that healing
 * takes back (one token here), or null where the last token is not the start of a longer one.
 */
const HEALING_CASES: { prompt: string; tokens: number; healed: string | null }[] = [
  { prompt: 'def fibonacci(n):\n    ret', tokens: 10, healed: 't' }, // ... '   ' ' re' 't'
  { prompt: 'const value = some', tokens: 9, healed: 'me' }, // ... ' ' 's' 'o' 'me'
  { prompt: 'def f(x):\n    ', tokens: 6, healed: '    ' }, // ... '):\n' '    '
  { prompt: 'x = [1, 2', tokens: 8, healed: null },
  { prompt: 'if (x) {\n\t', tokens: 7, healed: null },
];

test('a healed generation is the continuation of the prompt as the model wrote it', async () => {
  for (const { prompt, tokens, healed } of HEALING_CASES) {
    const ids = engine.tokenize(prompt);
    assert.equal(ids.length, tokens, JSON.stringify(prompt));
    // The prompt the model sees: the text before the healed end, tokenized on its own (not planHealing's plan).
    const kept = healed === null ? ids : engine.tokenize(prompt.slice(0, prompt.length - healed.length));
    if (healed !== null) {
      assert.ok(prompt.endsWith(healed));
      assert.equal(kept.length, ids.length - 1, 'one token taken back');
      assert.deepEqual(kept, ids.slice(0, -1));
    }
    for (const opts of [{ temperature: 0 }, { temperature: 0.8, topK: 20, seed: 5, speculativeTokens: 4 }, { numBeams: 3, numReturnSequences: 2 }]) {
      const what = JSON.stringify({ prompt, opts });
      const r = await engine.generate(prompt, { maxNewTokens: 12, ignoreEos: true, tokenHealing: true, ...opts });
      assert.equal(r.stats.promptTokens, kept.length, `${what}: the healed token is not fed`);
      // prompt + output text == decode(prompt tokens the model saw + tokens it generated)
      assert.equal(prompt + r.text, engine.tokenizer.decode([...kept, ...r.tokens]), what);
      const generated = engine.tokenizer.decode(r.tokens);
      if (healed !== null) {
        // The output was constrained to write the healed text first, which the text then drops.
        assert.ok(generated.startsWith(healed), `${what}: ${JSON.stringify(generated)} starts with ${JSON.stringify(healed)}`);
        assert.equal(r.text, generated.slice(healed.length), what);
      } else {
        assert.equal(r.text, generated, what);
      }
      // Without healing the whole prompt is fed.
      const plain = await engine.generate(prompt, { maxNewTokens: 12, ignoreEos: true, tokenHealing: false, ...opts });
      assert.equal(plain.stats.promptTokens, ids.length, what);
    }
  }
});
