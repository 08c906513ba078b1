import type { CompletionFilter } from './filterContext';

/**
 * On a whitespace-only line the editor has already indented: the suggestion must start right at the
 * cursor (a ghost text that starts with whitespace makes Tab indent instead of accept, users' complaint #2).
 * When the model still writes leading whitespace, it is dropped, and the following lines move left by the
 * same amount so the block keeps its shape.
 */
export const reindentWhitespaceLine: CompletionFilter = (text, ctx) => {
  if (ctx.linePrefix === '' || ctx.linePrefix.trim() !== '') return text;
  const lines = text.split('\n');
  const extra = /^[ \t]*/.exec(lines[0])![0].length;
  if (extra === 0) return text;
  lines[0] = lines[0].slice(extra);
  for (let i = 1; i < lines.length; i++) {
    const own = /^[ \t]*/.exec(lines[i])![0].length;
    lines[i] = lines[i].slice(Math.min(own, extra));
  }
  return lines.join('\n');
};
