import type { ExtraChunk } from '../../types';

export interface PromptReportInput {
  path: string;
  line: number;
  character: number;
  /** The model or server the prompt is for, and its prompt format. */
  model: string;
  format: string;
  prompt: string;
  extra: readonly ExtraChunk[];
}

/**
 * What Show Prompt opens: where the prompt is for, each piece of context from another file with its sources,
 * then the prompt exactly as it is sent (special tokens written out). Positions are shown from 1, as the editor does.
 */
export function promptReport(r: PromptReportInput): string {
  const chars = r.extra.reduce((n, c) => n + c.text.length, 0);
  const lines = [`Ghostline prompt for ${r.path}:${r.line + 1}:${r.character + 1} (${r.model}, prompt format ${r.format})`, ''];
  if (r.extra.length === 0) lines.push('Context from other files: none.');
  else {
    lines.push(`Context from other files (${r.extra.length} ${r.extra.length === 1 ? 'file' : 'files'}, ${chars} characters):`);
    for (const c of r.extra) lines.push(`  - ${c.path}: ${(c.sources ?? ['extra']).join(', ')} (${c.text.split('\n').length} lines)`);
  }
  lines.push('', '──────── prompt, as sent ────────', r.prompt);
  return lines.join('\n');
}
