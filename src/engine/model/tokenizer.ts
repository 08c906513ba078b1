import { Tokenizer } from '@huggingface/tokenizers';
import { RequestError } from '../shared/errors';
import type { Prompt } from '../shared/prompt';

/** The model's tokenizer (`@huggingface/tokenizers`, no hand-written code), plus what the engine needs to know of it. */
export class TextTokenizer {
  private readonly tok: Tokenizer;
  /** Ids of added tokens marked special (FIM markers, EOS, file separators). */
  readonly specialIds: ReadonlySet<number>;
  /** Special token text -> id. */
  readonly specialTokens: ReadonlyMap<string, number>;
  /**
   * Every added token, special or not -> id. Some tokenizers (DeepSeek-Coder's) declare their FIM markers
   * as added tokens without the special flag; prompt templates look them up here.
   */
  readonly addedTokens: ReadonlyMap<string, number>;
  /** Highest id + 1 (base vocabulary and added tokens). */
  readonly vocabSize: number;

  /** Ids of every added token: literal text must never encode to one. */
  private readonly addedIds: ReadonlySet<number>;
  /** The same tokenizer without added tokens, built the first time document text contains one. */
  private literal: Tokenizer | null = null;
  /** What the post-processor puts around a text (a BOS for DeepSeek-Coder; nothing for most code models). */
  private readonly around: { before: number[]; after: number[] };

  constructor(
    private readonly tokenizerJson: object,
    private readonly tokenizerConfig: object,
  ) {
    this.tok = new Tokenizer(tokenizerJson, tokenizerConfig);
    const special = new Map<string, number>();
    const added = new Map<string, number>();
    for (const [id, token] of this.tok.get_added_tokens_decoder()) {
      added.set(token.content, id);
      if (token.special) special.set(token.content, id);
    }
    this.addedTokens = added;
    this.specialTokens = special;
    this.specialIds = new Set(special.values());
    let max = -1;
    for (const id of this.tok.get_vocab(true).values()) if (id > max) max = id;
    this.vocabSize = max + 1;
    this.addedIds = new Set(added.values());
    this.around = postProcessorTokens(this.tok);
  }

  /**
   * Encodes text as Hugging Face does by default: the tokenizer's post-processor adds what the model expects
   * (DeepSeek-Coder's begin-of-sentence token; nothing for most code models). Special-token strings in the
   * text become their ids (prompts carry FIM markers).
   */
  encode(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: true }).ids;
  }

  /** Encodes document text literally: special-token strings in it stay text. No BOS/EOS. */
  encodeLiteral(text: string): number[] {
    if (text.length === 0) return [];
    const ids = this.tok.encode(text, { add_special_tokens: false }).ids;
    if (!ids.some((id) => this.addedIds.has(id))) return ids;
    // Rare (ML code, tokenizer sources): re-encode with a tokenizer that has no added tokens to match.
    this.literal ??= new Tokenizer({ ...this.tokenizerJson, added_tokens: [] }, this.tokenizerConfig);
    return this.literal.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * A raw string is encoded as `encode` does; parts get the post-processor's tokens around them, `{text}`
   * literally and `{special}` as that one token (an unknown one is a RequestError).
   */
  encodePrompt(prompt: Prompt): number[] {
    if (typeof prompt === 'string') return this.encode(prompt);
    const out = [...this.around.before];
    for (const part of prompt) {
      if ('text' in part) {
        for (const id of this.encodeLiteral(part.text)) out.push(id);
        continue;
      }
      const id = this.addedTokens.get(part.special);
      if (id === undefined) throw new RequestError(`the prompt names a special token the model does not have: ${JSON.stringify(part.special)}`);
      out.push(id);
    }
    out.push(...this.around.after);
    return out;
  }

  decode(ids: ArrayLike<number>): string {
    if (ids.length === 0) return '';
    return this.tok.decode(Array.from(ids), { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  tokenId(token: string): number | undefined {
    return this.tok.token_to_id(token);
  }
}

/** Tokens the post-processor adds before and after a text, found by encoding one probe character both ways. */
function postProcessorTokens(tok: Tokenizer): { before: number[]; after: number[] } {
  const full = tok.encode('a', { add_special_tokens: true }).ids;
  const bare = tok.encode('a', { add_special_tokens: false }).ids;
  for (let i = 0; i + bare.length <= full.length; i++) {
    if (bare.every((id, j) => full[i + j] === id)) return { before: full.slice(0, i), after: full.slice(i + bare.length) };
  }
  return { before: [], after: [] };
}
