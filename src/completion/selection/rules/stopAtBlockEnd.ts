import type { GenerateRule } from './ruleContext';

/**
 * Stops where the block that holds the insertion ends (tree-sitter, through ctx.syntax): the body being
 * written, the block being finished, or, at the top level, the first declaration. Without it the model goes
 * on past the function into code of its own (the next method, a test, a loop of copies). When the document
 * already closes the block below the insertion (`}` of a method in the middle of a class), the result's own
 * closing line is one too many: the cut without it is taken when the full cut adds parse errors and it
 * does not.
 */
export const stopAtBlockEnd: GenerateRule = (text, ctx) => {
  const cut = ctx.syntax?.blockEnd(text);
  if (!cut) return text;
  const keep = text.slice(0, cut.keep).trimEnd();
  if (cut.open !== null && ctx.syntax!.addsErrors(keep) === true) {
    const open = text.slice(0, cut.open).trimEnd();
    if (open.trim() !== '' && ctx.syntax!.addsErrors(open) === false) return open;
  }
  return keep;
};
