import { text, type PromptPart } from '../../engine/shared/prompt';
import type { DocumentContext, ExtraChunk } from '../types';
import type { FimTemplate } from './fimTemplates';

export interface BuiltPrompt {
  /** Template markers as special parts, document text as literal parts. */
  prompt: PromptPart[];
  /** Text the model is asked to continue: the cursor line up to the cursor. */
  middle: string;
}

/**
 * Orders the prompt from stable to volatile so that a keystroke invalidates only the tail of the KV cache:
 *   [extra chunks][FIM prefix] lines above [FIM suffix] rest of line + lines below [FIM middle] line so far
 * On a whitespace-only line the indentation stays in the middle (the engine's token healing re-tokenizes it
 * as the model saw indentation in training; sent empty, the model writes top-level code at column 0).
 * Extra chunks need the family's file separator
 * (`<file_sep>`, `<|file_sep|>`): without one they would read as part of the current file.
 */
export function buildPrompt(ctx: DocumentContext, template: FimTemplate | null, extra: ExtraChunk[], path: string): BuiltPrompt {
  const middle = ctx.linePrefix;
  if (!template) {
    // No FIM tokens: a plain left-to-right prompt (the suffix cannot be used).
    return { prompt: [text(ctx.prefix + middle)], middle };
  }
  const head: PromptPart[] = [];
  if (template.fileHeader && extra.length > 0) {
    for (const c of extra) head.push(...template.fileHeader(c.path), text(c.text + (c.text.endsWith('\n') ? '' : '\n')));
    head.push(...template.fileHeader(path));
  }
  const prompt = [...head, ...template.fim(ctx.prefix, ctx.lineSuffix + ctx.suffix)];
  if (middle) prompt.push(text(middle));
  return { prompt, middle };
}
