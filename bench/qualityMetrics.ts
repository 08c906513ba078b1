/** How a shown suggestion compares with what the user went on to write (the rest of the line). */
import { firstLine } from '../src/completion/calibrate/keptMatch';

export { exactRestOfLine, firstLine, gateCurve, THRESHOLDS, type CurvePoint } from '../src/completion/calibrate/keptMatch';

/**
 * The first word the editor's word-by-word accept (Ctrl+Right) would take is right: the suggestion up to
 * the end of its first run of word characters (or its first run of symbols, when it starts with one).
 */
export function firstWordRight(suggestion: string, expected: string): boolean {
  const line = firstLine(suggestion);
  const m = /^\s*(?:\w+|[^\w\s]+)/.exec(line);
  const word = m ? m[0] : line;
  if (word.length === 0 || !expected.startsWith(word)) return false;
  // "item" is not a right first word of "items": the word must end where the expected one does.
  return !(/\w$/.test(word) && /^\w/.test(expected.slice(word.length)));
}
