import { special as S, text as T, type PromptPart } from '../../engine/shared/prompt';

/**
 * Fill-in-the-middle prompt formats by model family, picked from the model's own special tokens.
 * `file` is the repo-level separator the family was trained with, used for extra context chunks.
 */
export interface FimTemplate {
  family: string;
  /**
   * Builds `[FIM prefix marker]prefix[suffix marker]suffix[middle marker]` (or the family's order). Markers
   * are special parts; the document's text stays literal, whatever it contains.
   */
  fim(prefix: string, suffix: string): PromptPart[];
  /** Separator before each extra-context file ("<file_sep>path\n"), if the family has repo-level tokens. */
  fileHeader?: (path: string) => PromptPart[];
  /** The repository's name before the files (Qwen2.5-Coder's `<|repo_name|>name\n`), if the family has one. */
  repoHeader?: (name: string) => PromptPart[];
  /** Tokens that mean "the middle is complete" beyond EOS. */
  stopTokens: string[];
}

type Specials = Record<string, number> | Set<string>;

function has(specials: Specials, ...tokens: string[]): boolean {
  return tokens.every((t) => (specials instanceof Set ? specials.has(t) : t in specials));
}

export function pickFimTemplate(specials: Specials): FimTemplate | null {
  if (has(specials, '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>')) {
    const fim = (p: string, s: string) => [S('<|fim_prefix|>'), T(p), S('<|fim_suffix|>'), T(s), S('<|fim_middle|>')];
    // CodeGemma has the same three markers, and ends a middle with its own file separator.
    if (has(specials, '<|file_separator|>') && !has(specials, '<|file_sep|>')) {
      return { family: 'codegemma', fim, stopTokens: ['<|file_separator|>', '<eos>', '<end_of_turn>'] };
    }
    return {
      family: 'qwen2.5-coder',
      fim,
      fileHeader: has(specials, '<|file_sep|>') ? (path) => [S('<|file_sep|>'), T(`${path}\n`)] : undefined,
      repoHeader: has(specials, '<|repo_name|>', '<|file_sep|>') ? (name) => [S('<|repo_name|>'), T(`${name}\n`)] : undefined,
      stopTokens: ['<|endoftext|>', '<|file_sep|>', '<|fim_pad|>', '<|im_end|>'],
    };
  }
  if (has(specials, '<fim_prefix>', '<fim_suffix>', '<fim_middle>')) {
    return {
      family: 'starcoder',
      fim: (p, s) => [S('<fim_prefix>'), T(p), S('<fim_suffix>'), T(s), S('<fim_middle>')],
      fileHeader: has(specials, '<file_sep>') ? (path) => [S('<file_sep>'), T(`${path}\n`)] : undefined,
      stopTokens: ['<|endoftext|>', '<file_sep>'],
    };
  }
  if (has(specials, '<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>')) {
    return {
      family: 'deepseek-coder',
      fim: (p, s) => [S('<｜fim▁begin｜>'), T(p), S('<｜fim▁hole｜>'), T(s), S('<｜fim▁end｜>')],
      stopTokens: ['<｜end▁of▁sentence｜>', '<|EOT|>'],
    };
  }
  if (has(specials, '▁<PRE>', '▁<SUF>', '▁<MID>') || has(specials, '<PRE>', '<SUF>', '<MID>')) {
    const m = has(specials, '<PRE>', '<SUF>', '<MID>') ? '' : '▁';
    return {
      family: 'codellama',
      fim: (p, s) => [S(`${m}<PRE>`), T(` ${p}`), S(`${m}<SUF>`), T(s), S(`${m}<MID>`)],
      stopTokens: ['<EOT>', '</s>'],
    };
  }
  return null;
}

/** The special tokens each family's template is recognised by (for servers, whose tokens Ghostline cannot read). */
const FAMILY_TOKENS: Record<string, string[]> = {
  'qwen2.5-coder': ['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_sep|>', '<|repo_name|>'],
  starcoder: ['<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>'],
  'deepseek-coder': ['<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>'],
  codellama: ['<PRE>', '<SUF>', '<MID>'],
  codegemma: ['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_separator|>'],
};

export const FIM_FAMILIES = Object.keys(FAMILY_TOKENS);

/**
 * Each family's special tokens, the FIM prefix marker first: what a server's vocabulary is asked about. Code
 * Llama's SentencePiece vocabulary spells its markers with the word-start mark (`▁<PRE>`), so both spellings.
 */
export const FIM_MARKER_SETS: readonly (readonly string[])[] = [...Object.values(FAMILY_TOKENS), ['▁<PRE>', '▁<SUF>', '▁<MID>']];

/** The template of a named family (one of FIM_FAMILIES), or null for an unknown name. */
export function fimTemplateForFamily(family: string): FimTemplate | null {
  const tokens = FAMILY_TOKENS[family];
  return tokens ? pickFimTemplate(new Set(tokens)) : null;
}
