import type { ServerOptions } from './serverOptions';
import type { PromptTokenizer } from './promptTokenizer';
import { detokenize, postToRoot, tokenIds } from './tokenizeRoutes';
import type { ServerKind } from './protocols';

/**
 * Code that tells pre-tokenizers apart: identifiers with underscores, 4-space indentation after `):` and a
 * newline, runs of digits, operators, a tab, a non-ASCII letter. The default model's own regex keeps `_` in
 * words and `):\n` together; llama.cpp's presets do neither (issue 27: 35 tokens against our 29 for three
 * lines of Python).
 */
export const TOKENIZER_PROBE =
  'def variance(values_list):\n    m = mean(values_list)\n    return sum((v - m) ** 2 for v in values_list) / 12345\n' +
  '\n\nclass Café:\n\tx_1 = {"a": [1, 2.5]}  # done\n';

/**
 * - same: the server tokenizes text as the local tokenizer does: text prompts are exact.
 * - ids: same vocabulary, other tokenization (a GGUF whose pre-tokenizer llama.cpp has no preset for): exact
 *   only when the prompt goes as token ids, which this protocol can send.
 * - differs: the local model's vocabulary but a tokenization that ids cannot fix here (the protocol takes only
 *   text, or the server renders some of our tokens, FIM markers included, as other text).
 * - other-model: another vocabulary altogether: the server runs another model, whose tokenizer is its own.
 * - unchecked: the server has no /tokenize and /detokenize that answered (Ollama, a gateway that passes only
 *   the completion routes).
 */
export type TokenizerVerdict = 'same' | 'ids' | 'differs' | 'other-model' | 'unchecked';

export interface TokenizerCheck {
  verdict: TokenizerVerdict;
  /** One line for the log (and, for `differs`, the status bar). */
  message: string;
  /** The probe's token counts, when the server answered. */
  localTokens?: number;
  serverTokens?: number;
}

/** Protocols whose completion request takes the prompt as token ids (llama.cpp /completion, /v1/completions). */
const TAKES_TOKEN_IDS: Readonly<Record<ServerKind, boolean>> = { 'llama.cpp': true, openai: true, ollama: false };

/**
 * Compares the server's tokenization of TOKENIZER_PROBE with the local model's, at connect time: llama.cpp's
 * and vLLM's POST /tokenize and /detokenize (both at the server's root; the field names of both are sent).
 * `specials` are the FIM markers the prompt will use: with ids they must mean the same tokens on the server.
 */
export async function checkServerTokenizer(o: ServerOptions, tok: PromptTokenizer, modelName: string, specials: readonly string[]): Promise<TokenizerCheck> {
  if (o.kind === 'ollama') {
    return {
      verdict: 'unchecked',
      message: `Ollama has no /tokenize: its tokenization of ${modelName}'s vocabulary cannot be compared, and it takes only text prompts`,
    };
  }
  const local = tok.encodeLiteral(TOKENIZER_PROBE);
  let server: number[];
  try {
    server = tokenIds(
      await postToRoot(o, '/tokenize', {
        content: TOKENIZER_PROBE,
        prompt: TOKENIZER_PROBE,
        model: o.model,
        add_special: false,
        add_special_tokens: false,
        parse_special: false,
      }),
    );
  } catch (err) {
    return { verdict: 'unchecked', message: `the server's tokenizer was not compared with ${modelName}'s: /tokenize ${reason(err)}` };
  }
  const counts = { localTokens: local.length, serverTokens: server.length };
  if (server.length === local.length && server.every((id, i) => id === local[i])) {
    return { verdict: 'same', message: `the server tokenizes text as ${modelName} does (${local.length} tokens for the probe)`, ...counts };
  }
  const where = firstDifference(tok, local, server);
  let back: string;
  let marks: string;
  try {
    back = await detokenize(o, local);
    const ids = specials.map((s) => tok.addedTokens.get(s));
    marks = ids.every((id) => id !== undefined) ? await detokenize(o, ids as number[]) : '';
  } catch (err) {
    return {
      verdict: 'differs',
      message: `the server's tokenizer differs from ${modelName}'s: suggestions may be poor (${counts.serverTokens} tokens for the probe against ${counts.localTokens}, ${where}; /detokenize ${reason(err)})`,
      ...counts,
    };
  }
  const sameVocabulary = back === TOKENIZER_PROBE;
  const sameMarkers = marks === specials.join('');
  if (sameVocabulary && sameMarkers && TAKES_TOKEN_IDS[o.kind]) {
    return {
      verdict: 'ids',
      message:
        `the server has ${modelName}'s vocabulary but splits text its own way (${counts.serverTokens} tokens for the probe against ${counts.localTokens}, ${where}; ` +
        `a GGUF's tokenizer.ggml.pre names a preset, not the model's regex): Ghostline sends the prompt as ${modelName}'s token ids`,
      ...counts,
    };
  }
  if (!sameVocabulary && tok.decode(server) !== TOKENIZER_PROBE) {
    return {
      verdict: 'other-model',
      message: `the server's model has another vocabulary than ${modelName}: it tokenizes with its own tokenizer (not compared)`,
      ...counts,
    };
  }
  const why = !sameVocabulary
    ? `its /detokenize of ${modelName}'s ids gives other text`
    : !sameMarkers
      ? `its FIM markers ${specials.join(' ')} are other tokens`
      : 'this protocol takes only text';
  return {
    verdict: 'differs',
    message: `the server's tokenizer differs from ${modelName}'s: suggestions may be poor (${counts.serverTokens} tokens for the probe against ${counts.localTokens}, ${where}; ${why})`,
    ...counts,
  };
}

/** Where two tokenizations of the probe first part, as text: `"):\n    " as "):" + "\n" + "   "`. */
function firstDifference(tok: PromptTokenizer, local: number[], server: number[]): string {
  let i = 0;
  while (i < local.length && i < server.length && local[i] === server[i]) i++;
  const piece = (ids: number[]) => ids.map((id) => JSON.stringify(tok.decode([id]))).join(' + ');
  return `first at token ${i}: ${piece(local.slice(i, i + 2))} here, ${piece(server.slice(i, i + 3))} there`;
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));
