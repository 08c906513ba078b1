import type { CompletionFilter } from './filterContext';

/** Lines this short (`}`, `break`, `end`) legitimately follow themselves. */
const MIN_CHARS = 6;

/**
 * Drops a completion whose line is a copy of the line above the cursor: small models fall back to
 * repeating the previous statement when they have nothing better, and an exact duplicate line is almost
 * never what the user is about to write.
 */
export const dropRepeatOfLineAbove: CompletionFilter = (text, ctx) => {
  const above = ctx.lineAbove.trim();
  if (above.length < MIN_CHARS || !/[\p{L}\p{N}]/u.test(above)) return text;
  const first = (ctx.linePrefix + text.split('\n')[0]).trim();
  return first === above ? null : text;
};
