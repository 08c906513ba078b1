import { indentOf } from '../../filters/filterContext';
import type { GenerateRule } from './ruleContext';

const CLOSER = /^[)\]}]/;

/**
 * A result whose first code line is less indented than the insertion line has left the block before
 * writing anything in it: after a docstring, the default model often skipped the body and wrote the next
 * method (`    def __init__` after a method's docstring). Cut at the block's end, that is an empty result
 * presented as a body; it is dropped (Regenerate tries another seed). A closing line (`}` of an empty
 * body) is not such a start, and a result on the insertion line itself is judged by its later lines.
 */
export const dropStartOutsideBlock: GenerateRule = (text, ctx) => {
  const linePrefix = ctx.above.slice(ctx.above.lastIndexOf('\n') + 1);
  if (linePrefix.trim() === '') return text;
  const first = text
    .split('\n')
    .slice(1)
    .find((l) => l.trim() !== '');
  if (first === undefined || CLOSER.test(first.trim())) return text;
  return indentOf(first) < indentOf(linePrefix) ? null : text;
};
