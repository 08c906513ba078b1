import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { rejoinedWindow } from '../../../src/completion/nextEdit/rejoin';

const WINDOW = [
  'def area(width, depth):',
  '    """The area."""',
  '    result = width * height',
  '    log.debug(result)',
  '    return result',
  '',
  'print(area(2, 3))',
].join('\n');
const lines = (n: number, changed: string[]) => `${[...changed].slice(0, n).join('\n')}\n`;

test('a changed line, then three lines copied with code on two of them: the rest of the window follows', () => {
  const answer = ['def area(width, depth):', '    """The area."""', '    result = width * depth', '    log.debug(result)', '    return result', ''];
  assert.equal(rejoinedWindow(WINDOW, lines(5, answer)), null, 'two copied lines are not enough');
  assert.equal(rejoinedWindow(WINDOW, lines(6, answer)), WINDOW.replace('width * height', 'width * depth'));
});

test('no change yet, a partial line, or a run of blank lines: no stop', () => {
  assert.equal(rejoinedWindow(WINDOW, `${WINDOW}\n`), null);
  assert.equal(rejoinedWindow(WINDOW, 'def area(width, depth):\n    """The'), null);
  const blanks = ['a', '', '', ''].join('\n');
  assert.equal(rejoinedWindow(blanks, 'b\n\n\n\n'), null);
});

test('an inserted block rejoins after it; a deletion rejoins at the lines after the deleted ones', () => {
  const inserted = [
    'def area(width, depth):',
    '    """The area."""',
    '    assert width > 0',
    '    result = width * height',
    '    log.debug(result)',
    '    return result',
    '',
  ];
  assert.equal(rejoinedWindow(WINDOW, `${inserted.join('\n')}\n`), WINDOW.replace('    result', '    assert width > 0\n    result'));
  const deleted = ['def area(width, depth):', '    """The area."""', '    result = width * height', '    return result', '', 'print(area(2, 3))'];
  // After the deletion only two lines remain, one with code: the answer must run to its end.
  assert.equal(rejoinedWindow(WINDOW, `${deleted.join('\n')}\n`), null);
});
