import type { CompletionFilter } from './filterContext';

/**
 * On a whitespace-only line the prompt's middle was sent empty, so the model wrote the line with its own
 * indentation. The editor already indented the line: the first line starts right at the cursor (a ghost
 * text that starts with whitespace makes Tab indent instead of accept, users' complaint #2), and when the
 * model indented deeper than the cursor, the following lines move left by the same amount so the block
 * keeps its shape.
 */
export const reindentWhitespaceLine: CompletionFilter = (text, ctx) => {
  if (!ctx.strippedIndent) return text;
  const lines = text.split('\n');
  const lead = /^[ \t]*/.exec(lines[0])![0];
  const extra = Math.max(0, lead.length - ctx.strippedIndent.length);
  lines[0] = lines[0].slice(lead.length);
  for (let i = 1; i < lines.length && extra > 0; i++) {
    const own = /^[ \t]*/.exec(lines[i])![0].length;
    lines[i] = lines[i].slice(Math.min(own, extra));
  }
  return lines.join('\n');
};
