import { indentOf } from '../../filters/filterContext';
import type { GenerateRule } from './ruleContext';

const CLOSER = /^[)\]}]/;

/**
 * After an opening bracket (`area() {`), a result that never closes the block it opens is unfinished (the
 * limit came first): inserted, its body would take the closing `}` of the class or function around it. The
 * parse check cannot see this (the window's open brackets are closed virtually, since a window may end
 * mid-file), so it is decided by indentation: the result or the document right after the insertion must
 * have a closing line at most as indented as the insertion line. A result that leaves a bracket, string or
 * comment of its own open (by its language's lexer) is dropped too. Dropped unless the user keeps it, as a
 * result that adds parse errors is.
 */
export const dropUnclosedBlock: GenerateRule = (text, ctx) => {
  if (ctx.keepParseErrors) return text;
  // Its own brackets too: `def parse(textwrap.dedent(...` cut by the limit is closed virtually as well.
  if (ctx.syntax?.leavesOpen(text)) return null;
  const linePrefix = ctx.above.slice(ctx.above.lastIndexOf('\n') + 1);
  if (!/[{[(]\s*$/.test(linePrefix)) return text;
  const indent = indentOf(linePrefix);
  const closes = (l: string) => l.trim() !== '' && indentOf(l) <= indent && CLOSER.test(l.trim());
  if (text.split('\n').slice(1).some(closes)) return text;
  const next = ctx.below.split('\n').find((l) => l.trim() !== '');
  return next !== undefined && indentOf(next) === indent && CLOSER.test(next.trim()) ? text : null;
};
