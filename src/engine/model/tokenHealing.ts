import type { TextTokenizer } from './tokenizer';

/** What healing needs of a tokenizer: the engine's, or the extension host's copy of it (server backends). */
export type HealingTokenizer = Pick<TextTokenizer, 'decode' | 'encodeLiteral' | 'specialIds' | 'vocabSize'>;

/**
 * Token healing: a prompt cut at the cursor often ends inside what the tokenizer would write as one token
 * (`    ret|` is `    ret` + ..., where the file has `    return`; indentation before a `}`). Conditioned
 * on that unusual boundary, a model continues badly. So the prompt's last token is taken back and the output
 * is constrained to start with its text, which is then removed from it. The first token may also cover only
 * part of that text (the model may write 8 spaces of indent as 7 + " return"): the next token then continues
 * what is left, under the same rule, until the whole text is covered.
 */
export interface Healing {
  /** The prompt without its last token. */
  tokens: number[];
  /** The text the first generated token must start with (and that the output drops). */
  text: string;
  /** Ids that can begin the output: their text starts with `text` or is a proper prefix of it. */
  allowed: number[];
}

/** Every token's text, sorted, for prefix ranges by binary search; built once per tokenizer. */
export class TokenPrefixIndex {
  private readonly texts: string[];
  private readonly ids: number[];

  constructor(tokenizer: HealingTokenizer) {
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

  /** Ids of the tokens that can begin a text starting with `text`: those starting with it, and those that are a proper prefix of it. */
  compatibleWith(text: string): number[] {
    const out = this.startingWith(text);
    for (let k = 1; k < text.length; k++) {
      const part = text.slice(0, k);
      for (let i = this.lowerBound(part); i < this.texts.length && this.texts[i] === part; i++) out.push(this.ids[i]);
    }
    return out;
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
export function planHealing(prompt: string, tokens: number[], tokenizer: HealingTokenizer, index: TokenPrefixIndex): Healing | null {
  if (tokens.length < 2) return null;
  const ws = healTrailingWhitespace(prompt, tokens, tokenizer, index);
  if (ws) return ws;
  const last = tokens[tokens.length - 1];
  if (tokenizer.specialIds.has(last)) return null;
  const text = tokenizer.decode([last]);
  if (!text || text.includes('\uFFFD') || !prompt.endsWith(text)) return null;
  const allowed = index.compatibleWith(text);
  // At least the token itself; a longer one is what healing is for.
  if (allowed.length < 2) return null;
  return { tokens: tokens.slice(0, -1), text, allowed };
}

/** Tokens looked back over to re-tokenize the end of a prompt that ends in whitespace. */
const WHITESPACE_LOOKBACK = 8;

/**
 * A prompt that ends in spaces or tabs (the indentation of a fresh line) is tokenized unlike any text the
 * model saw: GPT-2-style pre-tokenizers give a run of whitespace before a word to the word (`    return` is
 * `   ` + ` return`), so a prompt ending in a 4-space token asks the model to continue from a boundary it
 * never met, and it writes top-level code or more spaces. The end is re-tokenized as if a word followed;
 * the tokens wholly inside the prompt are kept, and the rest (usually one space) is healed.
 */
function healTrailingWhitespace(prompt: string, tokens: number[], tokenizer: HealingTokenizer, index: TokenPrefixIndex): Healing | null {
  if (!/[ \t]$/.test(prompt)) return null;
  const tail: number[] = [];
  for (let i = tokens.length - 1; i >= 1 && tail.length < WHITESPACE_LOOKBACK && !tokenizer.specialIds.has(tokens[i]); i--) tail.unshift(tokens[i]);
  if (tail.length === 0) return null;
  const text = tokenizer.decode(tail);
  if (!prompt.endsWith(text) || text.includes('\uFFFD')) return null;
  // The tail must tokenize the same on its own, or its re-tokenization says nothing about the prompt.
  const alone = tokenizer.encodeLiteral(text);
  if (alone.length !== tail.length || alone.some((t, i) => t !== tail[i])) return null;
  const probe = tokenizer.encodeLiteral(`${text}x`);
  let end = 0;
  let kept = 0;
  for (const t of probe) {
    const piece = tokenizer.decode([t]);
    if (piece.includes('\uFFFD') || end + piece.length > text.length) break;
    end += piece.length;
    kept++;
  }
  const heal = text.slice(end);
  if (heal === '' || heal.trim() !== '') return null;
  const allowed = index.compatibleWith(heal);
  if (allowed.length < 2) return null;
  return { tokens: [...tokens.slice(0, tokens.length - tail.length), ...probe.slice(0, kept)], text: heal, allowed };
}

/** A copy of the logits row with every token outside `allowed` at -Infinity. */
export function restrictTo(row: Float32Array, allowed: readonly number[]): Float32Array {
  const out = new Float32Array(row.length).fill(-Infinity);
  for (const id of allowed) if (id < row.length) out[id] = row[id];
  return out;
}
