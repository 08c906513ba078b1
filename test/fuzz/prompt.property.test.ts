import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { boundPrompt, promptLength, promptText, type PromptPart } from '../../src/engine/shared/prompt';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { ROOT } from '../helpers';
import { fuzzParams } from './fuzzParams';

const FAMILIES = path.join(ROOT, 'test', 'fixtures', 'families');
const read = (dir: string, f: string) => (fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : {});

for (const family of ['qwen2.5-coder', 'starcoder2', 'deepseek-coder', 'smollm2']) {
  const dir = path.join(FAMILIES, family);
  const tok = new TextTokenizer(read(dir, 'tokenizer.json'), read(dir, 'tokenizer_config.json'));
  const added = [...tok.addedTokens.keys()];
  const addedIds = new Set(tok.addedTokens.values());
  // Qwen's tokenizer normalizes to NFC (a compatibility ideograph becomes its canonical character).
  const nfc = read(dir, 'tokenizer.json').normalizer?.type === 'NFC';
  // Document text made of the family's own special-token strings, their near misses, and anything else.
  const doc = fc
    .array(
      fc.oneof(
        fc.constantFrom(...added),
        fc.constantFrom(...added).map((s) => s.slice(0, -1)),
        fc.string({ unit: 'grapheme', maxLength: 6 }),
      ),
      { maxLength: 10 },
    )
    .map((p) => p.join(''));

  test(`${family}: document text never encodes to an added token, and decodes back to itself (NFC where the tokenizer normalizes)`, () => {
    fc.assert(
      fc.property(doc, (t) => {
        const ids = tok.encodeLiteral(t);
        assert.ok(!ids.some((id) => addedIds.has(id)), `added token in ${JSON.stringify(t)}`);
        assert.equal(tok.decode(ids), nfc ? t.normalize('NFC') : t);
      }),
      fuzzParams(1000),
    );
  });

  test(`${family}: in a parts prompt, the special tokens are exactly the {special} parts`, () => {
    const part = fc.oneof(
      doc.map((t): PromptPart => ({ text: t })),
      fc.constantFrom(...added).map((s): PromptPart => ({ special: s })),
    );
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 8 }), (parts) => {
        const ids = tok.encodePrompt(parts).filter((id) => addedIds.has(id));
        const wanted = parts.filter((p) => 'special' in p).map((p) => tok.addedTokens.get((p as { special: string }).special));
        // A BOS the post-processor adds comes first; then the markers, in order.
        assert.deepEqual(ids.slice(ids.length - wanted.length), wanted);
        assert.ok(ids.length - wanted.length <= 2);
      }),
      fuzzParams(500),
    );
  });
}

test('boundPrompt keeps at most the limit, keeps every marker, and keeps the end of the text', () => {
  const part = fc.oneof(
    fc.string({ maxLength: 60 }).map((t): PromptPart => ({ text: t })),
    fc.constantFrom('<a>', '<b>').map((s): PromptPart => ({ special: s })),
  );
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.array(part, { maxLength: 8 })), fc.integer({ min: 1, max: 150 }), (prompt, max) => {
      const { prompt: out, droppedChars } = boundPrompt(prompt, max);
      assert.ok(promptLength(out) <= Math.max(max, 0));
      assert.equal(promptLength(out) + droppedChars, promptLength(prompt));
      assert.ok(promptText(prompt).endsWith(promptText(out)) || typeof prompt !== 'string');
      if (typeof prompt !== 'string' && typeof out !== 'string') {
        const markers = (p: readonly PromptPart[]) => p.filter((x) => 'special' in x);
        assert.deepEqual(markers(out), markers(prompt));
        const flat = (p: readonly PromptPart[]) => p.map((x) => ('text' in x ? x.text : '')).join('');
        assert.ok(flat(prompt).endsWith(flat(out)));
      }
    }),
    fuzzParams(3000),
  );
});
