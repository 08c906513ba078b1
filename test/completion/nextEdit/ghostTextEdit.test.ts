import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { ghostTextAt } from '../../../src/completion/nextEdit/ghostTextEdit';

const edit = (startLine: number, startCharacter: number, endLine: number, endCharacter: number, newText: string) => ({
  startLine,
  startCharacter,
  endLine,
  endCharacter,
  newText,
});

test('only one insertion right at the cursor is ghost text', () => {
  assert.equal(ghostTextAt([edit(3, 4, 3, 4, 'x + 1')], 3, 4), 'x + 1');
  assert.equal(ghostTextAt([edit(3, 4, 3, 4, 'x + 1')], 3, 5), null, 'elsewhere on the line');
  assert.equal(ghostTextAt([edit(3, 4, 3, 6, 'x + 1')], 3, 4), null, 'a replacement');
  assert.equal(ghostTextAt([edit(3, 4, 3, 4, '')], 3, 4), null, 'nothing inserted');
  assert.equal(ghostTextAt([edit(3, 4, 3, 4, 'a'), edit(5, 0, 5, 0, 'b')], 3, 4), null, 'two edits');
});
