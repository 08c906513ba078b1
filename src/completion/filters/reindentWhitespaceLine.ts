import type { CompletionFilter } from './filterContext';

/**
 * On a whitespace-only line the prompt's middle was sent empty, so the model wrote the line with its own
 * indentation. The user's line already has `strippedIndent`: remove up to that much from the first line.
 */
export const reindentWhitespaceLine: CompletionFilter = (text, ctx) => {
  if (!ctx.strippedIndent) return text;
  const lead = /^[ \t]*/.exec(text)![0];
  const common = Math.min(lead.length, ctx.strippedIndent.length);
  return text.slice(common);
};
