import assert from 'node:assert/strict';
import { test } from 'node:test';
import { definitionsKey, symbolsNear } from '../../../src/completion/context/repo/definitionsSource';
import type { GatherAt } from '../../../src/completion/context/repo/repoContext';

const at = (text: string, line: number): GatherAt => ({ path: 'a.ts', languageId: 'typescript', length: text.length, text: () => text, line });

test('the symbols asked about: the cursor line from its end, then the line above, without keywords, short names or repeats, 6 at most', () => {
  const text = 'const store = openStore(path);\nconst value = store.get(key).trim();\nunused();';
  assert.deepEqual(
    symbolsNear(at(text, 1)).map((s) => `${s.name}@${s.line}:${s.character}`),
    ['trim@1:29', 'key@1:24', 'get@1:20', 'store@1:14', 'value@1:6', 'path@0:24'],
  );
  assert.deepEqual(
    symbolsNear(at('if (x) return new Map();', 0)).map((s) => s.name),
    ['Map'],
  );
});

test('a minified line or a huge document is not read for symbols', () => {
  assert.deepEqual(symbolsNear(at(`${'abc.'.repeat(400)}\nfoo();`, 1)), [{ name: 'foo', line: 1, character: 0 }]);
  const huge: GatherAt = { path: 'a.ts', languageId: 'typescript', length: 3_000_000, text: () => 'never read', line: 0 };
  assert.deepEqual(symbolsNear(huge), []);
});

test('the key changes with the cursor line and its symbols, not with punctuation typed between them', () => {
  assert.equal(definitionsKey(at('store.get(', 0)), definitionsKey(at('store.get()', 0)));
  assert.notEqual(definitionsKey(at('store.get(', 0)), definitionsKey(at('store.get(key', 0)));
  assert.notEqual(definitionsKey(at('store.get(\nstore.get(', 0)), definitionsKey(at('store.get(\nstore.get(', 1)));
});
