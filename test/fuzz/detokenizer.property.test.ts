import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { StreamingDetokenizer } from '../../src/engine/decode/streamingDetokenizer';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { ROOT } from '../helpers';
import { fuzzParams } from './fuzzParams';

/** Real tokenizers: the default model's byte-level BPE, and the family fixtures' (Qwen2, DeepSeek, SmolLM2). */
function load(dir: string): TextTokenizer {
  const read = (f: string) => (fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {});
  return new TextTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
}
const FAMILIES = path.join(ROOT, 'test', 'fixtures', 'families');
const tokenizers: [string, TextTokenizer][] = [
  ['default', load(defaultModelDir())],
  ...['qwen2.5-coder', 'deepseek-coder', 'smollm2'].map((f) => [f, load(path.join(FAMILIES, f))] as [string, TextTokenizer]),
];

function stream(tok: TextTokenizer, ids: number[]): string[] {
  const d = new StreamingDetokenizer((x) => tok.decode(x));
  const out = ids.map((id) => d.push(id));
  out.push(d.flush());
  return out;
}

// Text with many multi-byte characters: CJK, emoji (surrogate pairs), combining marks, mixed with code.
const text = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.constantFrom('def f(x):\n', '    return x', ' ', '\n', '\t', 'é', '日本語', '👍🏽', '🧑‍💻', 'e\u0301', '\u00a0', '{}', '"\\n"'),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

for (const [name, tok] of tokenizers) {
  test(`${name}: streamed deltas of any text add up to it, and never hold half a character`, () => {
    fc.assert(
      fc.property(text, (t) => {
        const ids = tok.encodeLiteral(t);
        const whole = tok.decode(ids);
        const deltas = stream(tok, ids);
        assert.equal(deltas.join(''), whole);
        for (const d of deltas) {
          if (!whole.includes('\uFFFD')) assert.ok(!d.includes('\uFFFD'), `delta ${JSON.stringify(d)}`);
          assert.ok(!/[\uD800-\uDBFF]$/.test(d), 'a delta ends in a lone high surrogate');
        }
      }),
      fuzzParams(1500),
    );
  });

  test(`${name}: any sequence of token ids streams to the same text as decoding it whole`, () => {
    const ids = fc.array(fc.integer({ min: 0, max: tok.vocabSize - 1 }), { maxLength: 24 });
    fc.assert(
      fc.property(ids, (seq) => {
        assert.equal(stream(tok, seq).join(''), tok.decode(seq));
      }),
      fuzzParams(1500),
    );
  });
}
