/**
 * The prompt of Sweep's next-edit models (sweepai/sweep-next-edit-0.5B and -1.5B, fine-tuned Qwen2.5-Coder), byte
 * for byte. The models were trained on one plain-text layout built from Qwen2.5-Coder's `<|file_sep|>` token; a
 * byte off (a missing newline, a "\" in a path) is a prompt the model never saw.
 *
 * Sources, read December 2026: Zed's client, github.com/zed-industries/zed crates/edit_prediction/src/sweep_prompt.rs
 * at commit 24e24d84 (`build_prompt`, `write_file_block`, `clean_response_text`, the test
 * `test_build_prompt_uses_run_model_ordering`, whose expected prompt is golden zedOrdering.txt); the model card's
 * `run_model.py` for sweepai/sweep-next-edit-1.5B (huggingface.co/sweepai/sweep-next-edit-1.5B), read through a
 * verbatim copy in a public repository because the card page itself could not be fetched here (nor the 0.5B card);
 * Sweep's blog (blog.sweep.dev/posts/oss-next-edit: the layout, the fixed 21-line window). Pinned layout:
 *
 *   <|file_sep|>{related path}\n{related text}\n                      one per related file
 *   <|file_sep|>{path}.diff\noriginal:\n{before}\nupdated:\n{after}\n   one per history block, oldest first
 *   <|file_sep|>original/{path}\n{window before the latest edit}\n
 *   <|file_sep|>current/{path}\n{window now}\n
 *   <|file_sep|>updated/{path}\n                                       the model writes the window from here
 *
 * Each body gets one "\n" after it unless it already ends with one (Zed's `write_file_block`): a window, which has
 * no trailing newline of its own, gets exactly one, and a window whose last line is empty shows that line only as
 * the "\n" that ends it. Zed sends at most 3 history blocks of at most 40 lines (EditHistory.blocks' defaults).
 * Where the sources disagree: `run_model.py` joins the parts with "\n", so its prompt ends at "updated/{path}"
 * without a newline and a body ending in "\n" is followed by a blank line; Zed (and cursortab's Sweep provider)
 * end the prompt with "\n", so the answer is the window itself. This follows Zed. `original/` is the window as it
 * was before the user's most recent edit (Zed maps the window into the buffer before its latest edit event; the
 * card: "contents prior to most recent change"), the current window when there is none. Zed refuses a prompt whose
 * text holds "<|file_sep|>" or "</s>"; so does this, and "<|endoftext|>" too (Qwen's end-of-text token). Stop
 * strings are Zed's and `run_model.py`'s ("<|file_sep|>", "</s>") plus "<|endoftext|>", which an engine that
 * returns special tokens as text may emit. The newer sweep-next-edit-v2-7B uses another layout (":start:end"
 * after the paths, a `<|cursor|>` marker): not this one.
 *
 * Text is LF only (Zed's buffers are), paths use "/" on every platform. No `vscode` import.
 */

import type { HistoryBlock } from './editHistory';

export const SWEEP_STOP_STRINGS: readonly string[] = ['<|file_sep|>', '</s>', '<|endoftext|>'];

export interface RelatedFile {
  path: string;
  text: string;
}

export interface SweepPromptInput {
  /** The edited file's workspace-relative path. */
  path: string;
  related: readonly RelatedFile[];
  history: readonly HistoryBlock[];
  originalWindow: string;
  currentWindow: string;
}

/** A path as the prompt writes it: "/" separators, whatever the platform gave. */
export const promptPath = (path: string): string => path.replace(/\\/g, '/');

const lf = (text: string) => (text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text);
const withNewline = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);

/** The prompt, or null when a path or text would break its structure (a reserved token, a newline in a path). */
export function buildSweepPrompt(input: SweepPromptInput): string | null {
  const paths = [input.path, ...input.related.map((r) => r.path), ...input.history.map((h) => h.path)];
  const texts = [input.originalWindow, input.currentWindow, ...input.related.map((r) => r.text), ...input.history.flatMap((h) => [h.original, h.updated])];
  if (paths.some((p) => /[\r\n]/.test(p) || SWEEP_STOP_STRINGS.some((t) => p.includes(t)))) return null;
  if (texts.some((text) => SWEEP_STOP_STRINGS.some((t) => text.includes(t)))) return null;
  const path = promptPath(input.path);
  const section = (header: string, body: string) => `<|file_sep|>${header}\n${withNewline(lf(body))}`;
  let prompt = '';
  for (const related of input.related) prompt += section(promptPath(related.path), related.text);
  for (const block of input.history)
    prompt += section(`${promptPath(block.path)}.diff`, `original:\n${withNewline(lf(block.original))}updated:\n${lf(block.updated)}`);
  prompt += section(`original/${path}`, input.originalWindow);
  prompt += section(`current/${path}`, input.currentWindow);
  return `${prompt}<|file_sep|>updated/${path}\n`;
}
