import { ConvertError } from '../errors';
import type { GgufHeader } from './ggufFile';
import { metaArray, metaNumber, metaString } from './ggufMeta';

/**
 * A Hugging Face tokenizer.json rebuilt from a GGUF file's tokenizer metadata, so the model folder Ghostline
 * writes is the same as one converted from the original checkpoint. A GGUF carries the vocabulary, the merges
 * and each token's type, but not the pre-tokenizer: `tokenizer.ggml.pre` names one of llama.cpp's presets
 * (src/llama-vocab.cpp), compiled into llama.cpp. The presets of the families Ghostline converts are written out
 * below as the original tokenizer.json files have them; any other preset is refused with a way out (put the
 * model's own tokenizer.json beside the .gguf file), because a guessed pre-tokenizer splits code into tokens the
 * model never saw and every suggestion gets worse without an error anywhere.
 */

/** llama.cpp's token types (llama.h: LLAMA_TOKEN_TYPE_*). */
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const USER_DEFINED = 4;
const UNUSED = 5;
const BYTE = 6;

const byteLevel = (useRegex: boolean, trimOffsets: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: trimOffsets, use_regex: useRegex });
const split = (regex: string) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });
const digits = { type: 'Digits', individual_digits: true };

interface Preset {
  normalizer: object | null;
  preTokenizer: object;
  ignoreMerges: boolean;
}

/** Digits one by one, then GPT-2's regex: StarCoder's and SmolLM's tokenizers (llama.cpp: starcoder, smollm). */
const STARCODER: Preset = { normalizer: null, preTokenizer: { type: 'Sequence', pretokenizers: [digits, byteLevel(true, true)] }, ignoreMerges: false };

const PRESETS: Record<string, Preset> = {
  // Qwen2 and Qwen2.5(-Coder), and what is fine-tuned from them (Sweep's next-edit models).
  qwen2: {
    normalizer: { type: 'NFC' },
    preTokenizer: {
      type: 'Sequence',
      pretokenizers: [
        split("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
        byteLevel(false, false),
      ],
    },
    ignoreMerges: false,
  },
  // Llama 3's tokenizer (numbers in groups of up to three digits); its tokenizer.json sets ignore_merges.
  'llama-bpe': {
    normalizer: null,
    preTokenizer: {
      type: 'Sequence',
      pretokenizers: [
        split("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
        byteLevel(false, false),
      ],
    },
    ignoreMerges: true,
  },
  'deepseek-coder': {
    normalizer: null,
    preTokenizer: {
      type: 'Sequence',
      pretokenizers: [
        split('[\\r\\n]'),
        split('\\s?\\p{L}+'),
        split('\\s?\\p{P}+'),
        split('[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+'),
        digits,
        byteLevel(false, true),
      ],
    },
    ignoreMerges: false,
  },
  starcoder: STARCODER,
  smollm: STARCODER,
  refact: STARCODER,
  'gpt-2': { normalizer: null, preTokenizer: byteLevel(true, true), ignoreMerges: false },
};

const TOKENIZER_PRESETS: readonly string[] = Object.keys(PRESETS);

export interface RebuiltTokenizer {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Ids named by the metadata: what generation_config.json says. */
  bos?: number;
  eos: number[];
}

export function tokenizerFromGguf(h: GgufHeader): RebuiltTokenizer {
  const beside = "put the model's own tokenizer.json (from its Hugging Face repo) beside the .gguf file, and Ghostline uses that instead";
  const kind = metaString(h, 'tokenizer.ggml.model');
  if (kind !== 'gpt2') {
    throw new ConvertError(
      h.file,
      `its vocabulary is of type ${JSON.stringify(kind)} (${kind === 'llama' ? 'SentencePiece' : 'not byte-level BPE'}), which Ghostline cannot rebuild from a GGUF: ${beside}`,
    );
  }
  // Files written before llama.cpp had presets (spring 2024) name none; a qwen2 model's vocabulary is Qwen's.
  const unnamed = h.metadata.get('general.architecture') === 'qwen2' ? 'qwen2' : 'default';
  const pre = metaString(h, 'tokenizer.ggml.pre', unnamed);
  const preset = PRESETS[pre];
  if (!preset) {
    throw new ConvertError(
      h.file,
      `its pre-tokenizer is llama.cpp's "${pre}", which Ghostline does not know (it knows ${TOKENIZER_PRESETS.join(', ')}): ${beside}`,
    );
  }
  const tokens = metaArray(h, 'tokenizer.ggml.tokens', 'string') as string[];
  const types = (h.metadata.has('tokenizer.ggml.token_type') ? metaArray(h, 'tokenizer.ggml.token_type', 'number') : tokens.map(() => NORMAL)) as number[];
  const merges = metaArray(h, 'tokenizer.ggml.merges', 'string') as string[];
  if (types.length !== tokens.length) throw new ConvertError(h.file, `has ${tokens.length} tokens but ${types.length} token types`);

  const vocab: Record<string, number> = {};
  const added: Record<string, unknown>[] = [];
  for (let id = 0; id < tokens.length; id++) {
    const type = types[id];
    if (type === UNUSED) continue; // llama.cpp's [PAD<id>] filler rows of the embedding
    if (type !== NORMAL && type !== CONTROL && type !== USER_DEFINED && type !== UNKNOWN && type !== BYTE) {
      throw new ConvertError(h.file, `token ${id} has type ${type}, which llama.cpp does not define`);
    }
    if (Object.hasOwn(vocab, tokens[id])) continue; // a duplicate string: the first id wins, as in the original
    vocab[tokens[id]] = id;
    if (type === CONTROL || type === USER_DEFINED) {
      added.push({ id, content: tokens[id], single_word: false, lstrip: false, rstrip: false, normalized: type === USER_DEFINED, special: type === CONTROL });
    }
  }
  const { bos, eos: uniqueEos } = ggufSpecialIds(h);
  const addBos = h.metadata.get('tokenizer.ggml.add_bos_token') === true && bos !== undefined;

  const tokenizerJson: Record<string, unknown> = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: preset.normalizer,
    pre_tokenizer: preset.preTokenizer,
    post_processor: addBos ? bosTemplate(tokens[bos!], bos!) : null,
    decoder: byteLevel(true, true),
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: preset.ignoreMerges,
      vocab,
      merges,
    },
  };
  const tokenizerConfig: Record<string, unknown> = {
    add_bos_token: addBos,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: metaNumber(h, `${metaString(h, 'general.architecture')}.context_length`, 32768),
    ...(uniqueEos.length ? { eos_token: tokens[uniqueEos[0]] } : {}),
    ...(bos !== undefined ? { bos_token: tokens[bos] } : {}),
    tokenizer_class: 'PreTrainedTokenizerFast',
    ghostline_note: `rebuilt from a GGUF file's metadata (pre-tokenizer preset "${pre}")`,
  };
  return { tokenizerJson, tokenizerConfig, bos, eos: uniqueEos };
}

/** The BOS id and the end ids (EOS, end of turn, end of message) the metadata names, each checked against the vocabulary. */
export function ggufSpecialIds(h: GgufHeader): { bos?: number; eos: number[] } {
  const tokens = h.metadata.get('tokenizer.ggml.tokens');
  const size = Array.isArray(tokens) ? tokens.length : Number.MAX_SAFE_INTEGER;
  const eos = ['tokenizer.ggml.eos_token_id', 'tokenizer.ggml.eot_token_id', 'tokenizer.ggml.eom_token_id']
    .map((k) => optionalId(h, k, size))
    .filter((id): id is number => id !== undefined);
  return { bos: optionalId(h, 'tokenizer.ggml.bos_token_id', size), eos: [...new Set(eos)] };
}

function optionalId(h: GgufHeader, key: string, size: number): number | undefined {
  if (!h.metadata.has(key)) return undefined;
  const id = metaNumber(h, key);
  if (!Number.isInteger(id) || id < 0 || id >= size) throw new ConvertError(h.file, `${key} is ${id}, not a token of its ${size}-token vocabulary`);
  return id;
}

/** What Hugging Face writes for a tokenizer that starts every text with its BOS token. */
function bosTemplate(bos: string, id: number): object {
  const special = { SpecialToken: { id: bos, type_id: 0 } };
  return {
    type: 'TemplateProcessing',
    single: [special, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [special, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } },
  };
}
