import type { CompletionFilter } from './filterContext';

/** Drops completions with nothing to offer: empty, whitespace, or exactly the text already after the cursor. */
export const dropTrivial: CompletionFilter = (text, ctx) => {
  const t = text.trimEnd();
  if (t.trim() === '') return null;
  if (ctx.lineSuffix.trim() !== '' && t.trim() === ctx.lineSuffix.trim()) return null;
  return t;
};
