/**
 * What the engine is asked to continue.
 * - A string is a raw prompt in the caller's own template: special-token text in it becomes the special
 *   token (as Hugging Face's default and llama.cpp's `/completion` do). The CLI and `serve-stdio`'s raw
 *   `prompt` use it.
 * - Parts keep document text and template markers apart: `{text}` is always tokenized literally, so a file
 *   containing `<fim_middle>` or `<|endoftext|>` cannot change the prompt's structure; only `{special}`
 *   parts (Ghostline's own FIM templates) produce special tokens.
 */
export type Prompt = string | readonly PromptPart[];
export type PromptPart = { readonly text: string } | { readonly special: string };

export const text = (t: string): PromptPart => ({ text: t });
export const special = (token: string): PromptPart => ({ special: token });

/** The prompt as one string (markers as their token text): for logs, token healing and stats. */
export function promptText(prompt: Prompt): string {
  if (typeof prompt === 'string') return prompt;
  return prompt.map((p) => ('text' in p ? p.text : p.special)).join('');
}

/** Characters of document text in the prompt. */
export function promptLength(prompt: Prompt): number {
  if (typeof prompt === 'string') return prompt.length;
  let n = 0;
  for (const p of prompt) n += 'text' in p ? p.text.length : 0;
  return n;
}

/** Checks a value received over IPC or JSON is a Prompt; returns a problem or null. */
export function promptProblem(prompt: unknown): string | null {
  if (typeof prompt === 'string') return prompt.length === 0 ? 'prompt must be a non-empty string' : null;
  if (!Array.isArray(prompt)) return 'prompt must be a string or an array of {text} / {special} parts';
  if (prompt.length === 0) return 'prompt has no parts';
  for (const p of prompt) {
    const ok =
      p !== null &&
      typeof p === 'object' &&
      Object.keys(p).length === 1 &&
      (typeof (p as { text?: unknown }).text === 'string' || typeof (p as { special?: unknown }).special === 'string');
    if (!ok) return 'each prompt part must be {"text": string} or {"special": string}';
  }
  return promptLength(prompt as PromptPart[]) === 0 && prompt.every((p) => 'text' in p) ? 'prompt must not be empty' : null;
}

/**
 * Drops text from the start so that at most `maxChars` characters of text remain (markers are kept). The cut
 * moves forward to the next line start when one is near, so the prompt's head (and its KV cache) stays the
 * same while text is appended at the end.
 */
export function boundPrompt(prompt: Prompt, maxChars: number): { prompt: Prompt; droppedChars: number } {
  const total = promptLength(prompt);
  if (total <= maxChars) return { prompt, droppedChars: 0 };
  let drop = total - maxChars;
  const cutText = (t: string, n: number): string => {
    const nl = t.indexOf('\n', n);
    return nl >= 0 && nl - n < maxChars / 8 ? t.slice(nl + 1) : t.slice(n);
  };
  if (typeof prompt === 'string') {
    const out = cutText(prompt, drop);
    return { prompt: out, droppedChars: prompt.length - out.length };
  }
  const parts: PromptPart[] = [];
  let dropped = 0;
  for (const p of prompt) {
    if (drop <= 0 || !('text' in p)) {
      parts.push(p);
      continue;
    }
    if (p.text.length <= drop) {
      drop -= p.text.length;
      dropped += p.text.length;
      continue; // an emptied text part disappears; its markers stay
    }
    const rest = cutText(p.text, drop);
    dropped += p.text.length - rest.length;
    drop = 0;
    parts.push({ text: rest });
  }
  return { prompt: parts, droppedChars: dropped };
}
