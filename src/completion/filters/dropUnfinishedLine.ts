import type { CompletionFilter } from './filterContext';

/**
 * A completion cut off by a limit (max tokens, the time budget, which only applies once the first line is
 * complete, or the loop stop) ends mid-line: `fib(n - 2` is worse than no last line. Such a completion keeps its complete lines;
 * a single line is kept as it is (the first line is all there is to show).
 */
export const dropUnfinishedLine: CompletionFilter = (text, ctx) => {
  if (ctx.finishReason !== 'length' && ctx.finishReason !== 'time' && ctx.finishReason !== 'loop') return text;
  const nl = text.lastIndexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
};
