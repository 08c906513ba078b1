import { text, type PromptPart } from '../../engine/shared/prompt';
import type { DocumentContext, ExtraChunk } from '../types';
import type { FimTemplate } from './fimTemplates';

export interface BuiltPrompt {
  /** Template markers as special parts, document text as literal parts. */
  prompt: PromptPart[];
  /** Text the model is asked to continue: the lines since the middle's anchor and the cursor line up to the cursor. */
  middle: string;
}

/** The middle starts at a multiple of this many lines: Enter on lines in between keeps the prompt's head. */
export const MIDDLE_ANCHOR_LINES = 8;
/** Lines above the cursor kept in the middle at most, in characters; beyond, the middle is the cursor line alone. */
export const MAX_MIDDLE_CHARS = 1000;

/**
 * Where the FIM prefix ends and the middle begins. The middle is not just the cursor line: it starts at the
 * last line whose number is a multiple of MIDDLE_ANCHOR_LINES (keeping at least one line of prefix), so the
 * lines typed since then are part of it. Why: everything after the prefix in the prompt (the suffix marker and
 * the whole suffix) has to be run again when the prefix changes. With the cursor line alone as the middle,
 * each Enter moved a line into the prefix and re-ran the whole suffix (hundreds of tokens); now Enter only
 * appends to the middle, and the prefix moves once every few lines. A partial middle of several lines is what
 * FIM training shows the model anyway (middles are random spans), and on the eval sets the lines just above
 * the cursor, next to what is generated, raised how often the default model is right (README, Quality).
 */
function splitMiddle(ctx: DocumentContext): { prefix: string; middle: string } {
  let lines = 0;
  for (let i = ctx.prefix.indexOf('\n'); i >= 0; i = ctx.prefix.indexOf('\n', i + 1)) lines++;
  const cursorLine = ctx.prefixStartLine + lines;
  const anchor = Math.max(ctx.prefixStartLine + 1, Math.floor(cursorLine / MIDDLE_ANCHOR_LINES) * MIDDLE_ANCHOR_LINES);
  if (anchor >= cursorLine) return { prefix: ctx.prefix, middle: ctx.linePrefix };
  // The character where line `anchor` starts: after the (anchor - start)th newline of the prefix.
  let at = -1;
  for (let n = anchor - ctx.prefixStartLine; n > 0; n--) at = ctx.prefix.indexOf('\n', at + 1);
  const moved = ctx.prefix.slice(at + 1);
  if (moved.length > MAX_MIDDLE_CHARS) return { prefix: ctx.prefix, middle: ctx.linePrefix };
  return { prefix: ctx.prefix.slice(0, at + 1), middle: moved + ctx.linePrefix };
}

/**
 * Whether the prompt at `next` (the same document after Enter at the cursor) differs from the prompt at `ctx`
 * before its middle: the window's start moved, or (FIM) the middle's anchor, so everything after the prefix
 * (the whole suffix) has to be run again. A plain prompt only grows at its end when the start stays.
 */
export function promptHeadMoves(ctx: DocumentContext, next: DocumentContext, fim: boolean): boolean {
  if (next.prefixStartLine !== ctx.prefixStartLine) return true;
  return fim && splitMiddle(next).prefix !== splitMiddle(ctx).prefix;
}

/** How a prompt names the project and the files its extra context comes from. */
export interface PromptPlace {
  /** VS Code language id of the current file (picks the comment style of families without file tokens). */
  languageId?: string;
  /** The workspace's name, for families with a repository token (Qwen2.5-Coder's `<|repo_name|>`). */
  repoName?: string;
}

/**
 * Orders the prompt from stable to volatile so that a keystroke invalidates only the tail of the KV cache:
 *   [repo name][extra chunks][FIM prefix] lines above [FIM suffix] rest of line + lines below [FIM middle] lines
 *   since the anchor (splitMiddle) + line so far
 * On a whitespace-only line the indentation stays in the middle (the engine's token healing re-tokenizes it
 * as the model saw indentation in training; sent empty, the model writes top-level code at column 0).
 * Extra chunks go in the family's repository layout: a file separator (`<file_sep>`, `<|file_sep|>`) before each
 * file and the current file last; families without one (DeepSeek-Coder, Code Llama, plain models) get them as
 * comment lines at the head of the prefix (`// Path: a/b.ts` and the code commented out), so they cannot be read
 * as part of the current file.
 */
export function buildPrompt(ctx: DocumentContext, template: FimTemplate | null, extra: ExtraChunk[], path: string, place: PromptPlace = {}): BuiltPrompt {
  const commented = !template?.fileHeader && extra.length > 0 ? commentedContext(extra, place.languageId) : '';
  if (!template) {
    // No FIM tokens: a plain left-to-right prompt (the suffix cannot be used).
    return { prompt: [text(commented + ctx.prefix + ctx.linePrefix)], middle: ctx.linePrefix };
  }
  const { prefix, middle } = splitMiddle(ctx);
  const head: PromptPart[] = [];
  if (template.fileHeader && extra.length > 0) {
    if (template.repoHeader && place.repoName) head.push(...template.repoHeader(place.repoName));
    for (const c of extra) head.push(...template.fileHeader(promptPath(c.path)), text(c.text + (c.text.endsWith('\n') ? '' : '\n')));
    head.push(...template.fileHeader(promptPath(path)));
  }
  const prompt = [...head, ...template.fim(commented + prefix, ctx.lineSuffix + ctx.suffix)];
  if (middle) prompt.push(text(middle));
  return { prompt, middle };
}

/**
 * A path as the models saw paths in training: with `/`. VS Code gives workspace-relative paths with `\` on
 * Windows, which would make the same project's prompt differ by platform (and waste tokens on `\`).
 */
function promptPath(p: string): string {
  return p.replace(/\\/g, '/');
}

const HASH_COMMENT = new Set(['python', 'shellscript', 'ruby', 'perl', 'r', 'yaml', 'toml', 'dockerfile', 'makefile', 'powershell', 'elixir', 'julia', 'nim']);
const DASH_COMMENT = new Set(['sql', 'lua', 'haskell', 'elm']);

/** Extra context as line comments in the current file's language: `// Path: x.ts` and each code line commented. */
function commentedContext(extra: readonly ExtraChunk[], languageId = ''): string {
  const mark = HASH_COMMENT.has(languageId) ? '#' : DASH_COMMENT.has(languageId) ? '--' : '//';
  const out: string[] = [];
  for (const c of extra) {
    out.push(`${mark} Path: ${promptPath(c.path)}`);
    for (const line of c.text.replace(/\n$/, '').split('\n')) out.push(line ? `${mark} ${line}` : mark);
    out.push('');
  }
  return out.join('\n');
}
