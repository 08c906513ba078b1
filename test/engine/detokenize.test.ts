import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { StreamingDetokenizer } from '../../src/engine/decode/streamingDetokenizer';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { TINY } from '../helpers';

test('streaming detokenization never emits half a UTF-8 character', () => {
  const folder = readModelFolder(TINY);
  const tok = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
  const text = 'const s = "héllo 世界 — 😀🎉 👨\u200d👩\u200d👧";\n';
  const ids = tok.encode(text);
  assert.ok(ids.length > [...text].length / 2, 'multi-byte characters span several byte-level tokens');
  const detok = new StreamingDetokenizer((x) => tok.decode(x));
  let out = '';
  let held = 0;
  for (const id of ids) {
    const delta = detok.push(id);
    assert.ok(!delta.includes('\uFFFD'), `delta ${JSON.stringify(delta)} holds a replacement character`);
    if (delta === '') held++;
    out += delta;
  }
  out += detok.flush();
  assert.equal(out, text);
  assert.ok(held > 0, 'some tokens ended inside a character and were held back');
});
