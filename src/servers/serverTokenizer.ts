import * as path from 'node:path';
import { type FimTemplate, pickFimTemplate } from '../completion/prompt/fimTemplates';
import type { ServerOptions } from './serverOptions';
import { probeTokenizer } from '../engine/model/tokenizerProbe';
import { loadPromptTokenizer } from './promptTokenizer';
import type { ServerSetup } from './serverGenerator';
import { checkServerTokenizer, type TokenizerCheck } from './tokenizerCheck';

export interface TokenizerComparison {
  check: TokenizerCheck;
  /** The local model's FIM template when prompts now go as its ids (the server's name-guessed one may differ). */
  template?: FimTemplate;
  /** How the generators talk to this server: as the local tokenizer's ids, or as text healed on its ids. */
  setup: Pick<ServerSetup, 'tokenIds' | 'healer'>;
}

/**
 * At connect: compares the server's tokenizer with the local model's (`modelDir`, the folder the local backend
 * loads). When the server has the model's vocabulary but splits text its own way, prompts go as the local
 * tokenizer's ids in Ghostline's own layout; when it splits text the same way, tokens are healed on those ids.
 * Never throws: a local folder without a readable tokenizer is reported as unchecked.
 */
export async function compareServerTokenizer(o: ServerOptions, modelDir: string): Promise<TokenizerComparison> {
  const name = path.basename(modelDir);
  let tok: ReturnType<typeof loadPromptTokenizer>;
  try {
    // The host encodes a prompt on every keystroke with it: a tokenizer that can stall is never used here.
    await probeTokenizer(modelDir);
    tok = loadPromptTokenizer(modelDir);
  } catch (err) {
    return {
      check: { verdict: 'unchecked', message: `the local model's tokenizer (${modelDir}) could not be read to compare: ${(err as Error).message}` },
      setup: {},
    };
  }
  const template = pickFimTemplate(Object.fromEntries(tok.addedTokens)) ?? undefined;
  const specials = template ? template.fim('', '').flatMap((p) => ('special' in p ? [p.special] : [])) : [];
  const check = await checkServerTokenizer(o, tok, name, specials);
  if (check.verdict === 'same') return { check, template, setup: { healer: tok } };
  // Ollama's /api/generate takes no ids (and its check never says 'ids').
  if (check.verdict !== 'ids' || o.kind === 'ollama') return { check, setup: {} };
  return { check, template, setup: { tokenIds: tok } };
}
