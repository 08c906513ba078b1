import type { GenerateRule } from './ruleContext';

/**
 * A result cut off by a limit (max tokens, the time budget) ends mid-line: `return fib(n - 2` is worse than
 * no last line. Unlike the inline filter, a result that is one unfinished line is dropped too: Generate from
 * Selection is asked for whole code, and a fragment would be inserted after review as if it were.
 */
export const dropUnfinishedLastLine: GenerateRule = (text, ctx) => {
  if (ctx.finishReason !== 'length' && ctx.finishReason !== 'time') return text;
  const nl = text.lastIndexOf('\n');
  return nl < 0 ? null : text.slice(0, nl);
};
