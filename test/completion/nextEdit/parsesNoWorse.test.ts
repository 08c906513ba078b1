import * as assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { changedRegion, parsesNoWorseWith } from '../../../src/completion/nextEdit/parsesNoWorse';
import { SyntaxRefiner } from '../../../src/completion/syntax/syntaxRefiner';

const syntax = new SyntaxRefiner({ parseTimeoutMs: 5000 });
after(() => syntax.dispose());

const FILE = `import os\n\n\ndef area(width, depth):\n    return width * depth\n\n\n${'x = 1\n'.repeat(5000)}`;

test('changedRegion: the common head and tail of two texts', () => {
  assert.deepEqual(changedRegion('abcXYZdef', 'abcQdef'), { head: 3, tail: 3 });
  assert.deepEqual(changedRegion('same', 'same'), { head: 4, tail: 0 });
  assert.deepEqual(changedRegion('aaa', 'aaaa'), { head: 3, tail: 0 });
});

test('an edit that breaks the syntax is refused; one that keeps it is passed; a big file is sliced, not parsed whole', async () => {
  assert.equal(await syntax.ready('python'), true);
  const check = parsesNoWorseWith(syntax, 'python');
  assert.equal(check(FILE, FILE.replace('return width * depth', 'return width * depth * 2')), true);
  assert.equal(check(FILE, FILE.replace('def area(width, depth):', 'def area(width, depth:')), false);
  // An edit near the end of a 30,000-character file is judged on the text around it.
  const tail = FILE.length - 10;
  assert.equal(check(FILE, `${FILE.slice(0, tail)}y = (\n${FILE.slice(tail)}`), false);
});

test('a language without a grammar passes (the check can only hold back, never invent)', () => {
  assert.equal(parsesNoWorseWith(syntax, 'cobol')('a', 'b(('), true);
});
