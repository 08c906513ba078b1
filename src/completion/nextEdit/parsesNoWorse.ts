/**
 * The tree-sitter check of a next edit, as inline suggestions have it: the text around the change must parse
 * with no more errors after the edit than before. Only a slice around the change is parsed (the same sizes as the
 * inline check's window), so a huge file costs no more than a small one. A language without a grammar, or one
 * still loading, passes: the check can only hold back, never invent. No `vscode` import.
 */
import type { SyntaxRefiner } from '../syntax/syntaxRefiner';
import { SYNTAX_PREFIX_CHARS, SYNTAX_SUFFIX_CHARS } from '../syntax/syntaxWindow';

/** Where two texts differ: the length of their common head, and of their common tail after it. */
export function changedRegion(before: string, after: string): { head: number; tail: number } {
  const max = Math.min(before.length, after.length);
  let head = 0;
  while (head < max && before.charCodeAt(head) === after.charCodeAt(head)) head++;
  let tail = 0;
  while (tail < max - head && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
  return { head, tail };
}

export function parsesNoWorseWith(syntax: SyntaxRefiner, languageId: string): (before: string, after: string) => boolean {
  return (before, after) => {
    if (!syntax.isReady(languageId)) {
      syntax.prepare(languageId);
      return true;
    }
    const { head, tail } = changedRegion(before, after);
    const slice = (text: string) => {
      const from = Math.max(0, head - SYNTAX_PREFIX_CHARS);
      const to = Math.min(text.length, text.length - tail + SYNTAX_SUFFIX_CHARS);
      // Whole lines, so the slice starts where a statement can.
      const lineStart = from === 0 ? 0 : text.indexOf('\n', from) + 1;
      return text.slice(lineStart > 0 && lineStart < head ? lineStart : from, to);
    };
    const errors = (text: string) => syntax.windowErrors({ languageId, prefix: text, linePrefix: '', lineSuffix: '', suffix: '' });
    const was = errors(slice(before));
    const now = errors(slice(after));
    return was === null || now === null || now <= was;
  };
}
