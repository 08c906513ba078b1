import { Tokenizer } from '@huggingface/tokenizers';

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

  constructor(tokenizerJson: object, tokenizerConfig: object) {
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
  }

  /**
   * Encodes text as Hugging Face does by default: the tokenizer's post-processor adds what the model expects
   * (DeepSeek-Coder's begin-of-sentence token; nothing for most code models). Special-token strings in the
   * text become their ids (prompts carry FIM markers).
   */
  encode(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: true }).ids;
  }

  decode(ids: ArrayLike<number>): string {
    if (ids.length === 0) return '';
    return this.tok.decode(Array.from(ids), { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  tokenId(token: string): number | undefined {
    return this.tok.token_to_id(token);
  }
}
