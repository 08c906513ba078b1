/** Where a piece of repository context came from (Show Prompt and `ghostline prompt --json` name it). */
export type ContextSource = 'imports' | 'definitions' | 'similar' | 'ring';

/** The order of the sources in the prompt, most stable first: a keystroke then changes only the context's end. */
export const CONTEXT_SOURCES: readonly ContextSource[] = ['imports', 'ring', 'definitions', 'similar'];

/** One piece of code from another file, offered to the prompt. */
export interface ContextSnippet {
  source: ContextSource;
  /** Workspace-relative path with `/` separators. */
  path: string;
  /** The code: a declaration, a window of lines. */
  text: string;
  /** Higher is kept first when the budget is short (0..1 within a source; sources are weighed by the assembler). */
  score: number;
  /** First line of the text in its file (orders snippets of one file; -1: unknown). */
  line: number;
  /** The names it declares, so one declaration offered by two sources goes in once. */
  names?: readonly string[];
  /**
   * Found for what the cursor line holds, so it changes as the line is typed: laid out with the most volatile
   * sources (after the stable ones), so that a change moves only the context's end and its KV cache is kept.
   */
  atCursor?: boolean;
}
