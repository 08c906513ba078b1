import { planHealing, TokenPrefixIndex } from '../engine/model/tokenHealing';
import { type Prompt, promptText } from '../engine/shared/prompt';
import type { PromptTokenizer } from './promptTokenizer';
import type { Candidate } from './protocols';

/**
 * Token healing for a server, where the prompt goes as ids (the local engine does it inside its sampler). A
 * prompt that ends mid-word (`ret`) ends in a token the model rarely saw there: asked to go on from it, it
 * writes a worse first token than from the text before it. So the prompt's last token is held back, and the
 * model's answer must write that text first (`return` after `ret`): it is stripped from the answer.
 *
 * Two ways, by what the server can do:
 * - steer (llama.cpp, whose requests take a GBNF `grammar`): the grammar lets the server draw only tokens that
 *   continue the held-back text, as the local sampler does, so healing is planned exactly as the local
 *   engine plans it (mid-word, and the indentation of a fresh line) and at greedy gives the local answer;
 * - reject (other servers, which sample freely): an answer that goes elsewhere is no answer. Only a prompt
 *   that ends inside a word or number is healed then: after punctuation or indentation the model goes on well
 *   from the token as it is, and a rejection would only throw answers away (sampled ones most: Generate from
 *   Selection after `a +` found no answer in six seeds).
 * Null when there is nothing to heal: no ids, a prompt that ends in a special token (an empty FIM middle), or
 * (reject) one that does not end inside a word.
 */
export function planServerHealing(tok: PromptTokenizer, prompt: Prompt, ids: number[], mode: 'steer' | 'reject'): { ids: number[]; healed: string } | null {
  if (mode === 'steer') {
    const plan = planHealing(promptText(prompt), ids, tok, prefixIndex(tok));
    return plan && { ids: plan.tokens, healed: plan.text };
  }
  const last = typeof prompt === 'string' ? { text: prompt } : prompt.at(-1);
  if (!last || !('text' in last) || last.text === '' || ids.length < 2) return null;
  const healed = tok.decode([ids[ids.length - 1]]);
  if (!/\w$/.test(healed) || !last.text.endsWith(healed)) return null;
  return { ids: ids.slice(0, -1), healed };
}

/** Every token's text sorted, built once per tokenizer (about 0.3 s for a 150k vocabulary) on the first healing. */
const indexes = new WeakMap<PromptTokenizer, TokenPrefixIndex>();
function prefixIndex(tok: PromptTokenizer): TokenPrefixIndex {
  const known = indexes.get(tok);
  if (known) return known;
  const index = new TokenPrefixIndex(tok);
  indexes.set(tok, index);
  return index;
}

/** A GBNF grammar (llama.cpp's `grammar`) for any text that starts with `text`. */
export function startsWithGrammar(text: string): string {
  const literal = [...text]
    .map((c) => {
      if (c === '"' || c === '\\') return `\\${c}`;
      const code = c.codePointAt(0)!;
      return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : c;
    })
    .join('');
  return `root ::= "${literal}" .*`;
}

/** Top log-probabilities asked for on a healed request: the candidates that continue the held-back text. */
export const HEALING_TOP_LOGPROBS = 16;

/**
 * The chosen token's log-probability among the tokens that continue `left` (what is still held back), as the
 * local sampler reports it from its restricted row; the server reports it among all tokens. The restricted
 * row's total is estimated from the server's top candidates that continue `left`, plus the chosen one: exact
 * when they hold all of that mass, an upper bound on the probability otherwise.
 */
export function healedLogprob(chosen: Candidate, top: readonly Candidate[], left: string): number {
  const continues = (t: string) => t !== '' && (t.startsWith(left) || left.startsWith(t));
  // The chosen token by id where the server says (a stop string may have cut its streamed text short).
  const isChosen = (e: Candidate) => (e.id !== undefined && chosen.id !== undefined ? e.id === chosen.id : e.text === chosen.text);
  const lps = [chosen.logprob, ...top.filter((e) => !isChosen(e) && continues(e.text)).map((e) => e.logprob)];
  const max = Math.max(...lps);
  const total = max + Math.log(lps.reduce((s, lp) => s + Math.exp(lp - max), 0));
  return Math.min(0, chosen.logprob - total);
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
