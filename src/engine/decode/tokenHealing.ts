import type { TextTokenizer } from '../model/tokenizer';

/**
 * Token healing: a prompt cut at the cursor often ends inside what the tokenizer would write as one token
 * (`    ret|` is `    ret` + ..., where the file has `    return`; indentation before a `}`). Conditioned
 * on that unusual boundary, a model continues badly. So the prompt's last token is taken back and the first
 * generated token is constrained to start with its text; that text is then removed from the output.
 */
export interface Healing {
  /** The prompt without its last token. */
  tokens: number[];
  /** The text the first generated token must start with (and that the output drops). */
  text: string;
  /** Ids whose text starts with `text`, as a sorted-range lookup gave them. */
  allowed: number[];
}

/** Every token's text, sorted, for prefix ranges by binary search; built once per tokenizer. */
export class TokenPrefixIndex {
  private readonly texts: string[];
  private readonly ids: number[];

  constructor(tokenizer: TextTokenizer) {
    const entries: [string, number][] = [];
    for (let id = 0; id < tokenizer.vocabSize; id++) {
      if (tokenizer.specialIds.has(id)) continue;
      const text = tokenizer.decode([id]);
      // Single bytes of a multi-byte character decode to U+FFFD: they cannot be matched as text.
      if (text && !text.includes('\uFFFD')) entries.push([text, id]);
    }
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.texts = entries.map((e) => e[0]);
    this.ids = entries.map((e) => e[1]);
  }

  /** Ids of the tokens whose text starts with `prefix`. */
  startingWith(prefix: string): number[] {
    const from = this.lowerBound(prefix);
    const out: number[] = [];
    for (let i = from; i < this.texts.length && this.texts[i].startsWith(prefix); i++) out.push(this.ids[i]);
    return out;
  }

  private lowerBound(s: string): number {
    let lo = 0;
    let hi = this.texts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.texts[mid] < s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Plans healing for a tokenized prompt, or returns null when it does not apply: a one-token prompt, a
 * special last token (a FIM marker: the prompt ends on a clean boundary), or a last token whose text is
 * not the literal end of the prompt (a tokenizer that does not round-trip).
 */
export function planHealing(prompt: string, tokens: number[], tokenizer: TextTokenizer, index: TokenPrefixIndex): Healing | null {
  if (tokens.length < 2) return null;
  const last = tokens[tokens.length - 1];
  if (tokenizer.specialIds.has(last)) return null;
  const text = tokenizer.decode([last]);
  if (!text || text.includes('\uFFFD') || !prompt.endsWith(text)) return null;
  const allowed = index.startingWith(text);
  // At least the token itself; a longer one is what healing is for.
  if (allowed.length < 2) return null;
  return { tokens: tokens.slice(0, -1), text, allowed };
}

/** A copy of the logits row with every token outside `allowed` at -Infinity. */
export function restrictTo(row: Float32Array, allowed: readonly number[]): Float32Array {
  const out = new Float32Array(row.length).fill(-Infinity);
  for (const id of allowed) if (id < row.length) out[id] = row[id];
  return out;
}
