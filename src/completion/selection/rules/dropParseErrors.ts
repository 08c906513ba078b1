import type { GenerateRule } from './ruleContext';

/**
 * A result whose insertion adds parse errors the document did not have (an unclosed body after a limit, a
 * stray closer) is dropped, unless the user asked to keep it (the review's "Insert anyway"): code that does
 * not parse is rarely worth inserting, but the user may want to finish it by hand. Not parsed: kept.
 */
export const dropParseErrors: GenerateRule = (text, ctx) => {
  if (ctx.keepParseErrors || !ctx.syntax) return text;
  return ctx.syntax.addsErrors(text) === true ? null : text;
};
