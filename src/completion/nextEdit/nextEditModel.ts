/**
 * Whether a loaded model can serve next edits. The Sweep format is built from Qwen2.5-Coder's `<|file_sep|>`
 * token: a tokenizer without it would read the prompt's structure as plain text, so such a folder is refused with
 * one message. A Qwen2.5-Coder base model has the token but was never trained to rewrite a window: it is allowed
 * with a warning, as a user may have a fine-tune of their own under another name. No `vscode` import.
 */

const FILE_SEP = '<|file_sep|>';

export interface NextEditModelFacts {
  name: string;
  dir: string;
  specialTokens: Record<string, number>;
}

/** A reason the model cannot run next edits, or null. */
export function nextEditModelProblem(m: NextEditModelFacts): string | null {
  if (FILE_SEP in m.specialTokens) return null;
  return `${m.dir} is not a next-edit model: its tokenizer has no ${FILE_SEP} token, which the next-edit prompt is built from (Sweep's next-edit 0.5B and 1.5B, made from Qwen2.5-Coder, have it).`;
}

/** A warning for a model that can read the format but does not say it was trained for it, or null. */
export function nextEditModelWarning(m: NextEditModelFacts): string | null {
  const said = `${m.name} ${m.dir}`.toLowerCase();
  if (/next[-_ ]?edit|sweep|zeta|instinct/.test(said)) return null;
  return `${m.name} does not look like a next-edit model (its name does not say so): its proposals may be poor. Sweep's next-edit 0.5B and 1.5B were trained for it.`;
}
