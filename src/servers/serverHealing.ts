import type { Prompt } from '../engine/shared/prompt';
import type { PromptTokenizer } from './promptTokenizer';

/**
 * Token healing for a server, where the prompt goes as ids (the local engine does it inside its sampler). A
 * prompt that ends mid-word (`ret`) ends in a token the model rarely saw there: asked to go on from it, it
 * writes a worse first token than from the text before it. So the prompt's last token is held back, and the
 * model's answer must write that text first (`return` after `ret`): it is stripped, and an answer that goes
 * elsewhere is no answer. The local engine instead allows only tokens that start with that text; a server
 * samples freely, so healing here can only reject, never steer.
 *
 * Only a prompt that ends inside a word or number is healed (its last token ends in a letter, digit or `_`):
 * there the split is arbitrary and the model's continuation from it worst. After punctuation or indentation
 * the model goes on well from the token as it is, and a rejection would only throw answers away (sampled ones
 * most: Generate from Selection after `a +` found no answer in six seeds).
 * Null when there is nothing to heal: no ids, a prompt that ends in a special token (an empty FIM middle), or
 * one that does not end inside a word.
 */
export function planServerHealing(tok: PromptTokenizer, prompt: Prompt, ids: number[]): { ids: number[]; healed: string } | null {
  const last = typeof prompt === 'string' ? { text: prompt } : prompt.at(-1);
  if (!last || !('text' in last) || last.text === '' || ids.length < 2) return null;
  const healed = tok.decode([ids[ids.length - 1]]);
  if (!/\w$/.test(healed) || !last.text.endsWith(healed)) return null;
  return { ids: ids.slice(0, -1), healed };
}

/** Checks a streamed answer against the held-back text: what comes after it, or null once the answer went elsewhere. */
export class HealedPrefix {
  private got = '';

  constructor(private readonly expected: string) {}

  get done(): boolean {
    return this.got.length >= this.expected.length;
  }

  /** The part of `delta` past the held-back text ('' while still inside it), or null when it does not match. */
  push(delta: string): string | null {
    if (this.done) return delta;
    this.got += delta;
    const n = Math.min(this.got.length, this.expected.length);
    if (this.got.slice(0, n) !== this.expected.slice(0, n)) return null;
    return this.got.length > this.expected.length ? this.got.slice(this.expected.length) : '';
  }
}
