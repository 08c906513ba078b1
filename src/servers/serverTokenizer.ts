import * as path from 'node:path';
import { type FimTemplate, pickFimTemplate } from '../completion/prompt/fimTemplates';
import type { ServerOptions } from './serverOptions';
import { loadPromptTokenizer } from './promptTokenizer';
import type { ServerGenerator } from './serverGenerator';
import { checkServerTokenizer, type TokenizerCheck } from './tokenizerCheck';

export interface TokenizerSetup {
  check: TokenizerCheck;
  /** The local model's FIM template when prompts now go as its ids (the server's name-guessed one may differ). */
  template?: FimTemplate;
}

/**
 * At connect: compares the server's tokenizer with the local model's (`modelDir`, the folder the local backend
 * loads) and, when the server has the model's vocabulary but splits text its own way, switches `servers` to
 * sending the local tokenizer's ids in Ghostline's own prompt layout; when it splits text the same way, lets
 * them heal tokens on those ids (ServerGenerator.tokenizesAs). Never throws: a local folder without a
 * readable tokenizer is reported as unchecked.
 */
export async function setUpServerTokenizer(o: ServerOptions, modelDir: string, servers: readonly ServerGenerator[]): Promise<TokenizerSetup> {
  const name = path.basename(modelDir);
  let tok: ReturnType<typeof loadPromptTokenizer>;
  try {
    tok = loadPromptTokenizer(modelDir);
  } catch (err) {
    return { check: { verdict: 'unchecked', message: `the local model's tokenizer (${modelDir}) could not be read to compare: ${(err as Error).message}` } };
  }
  const template = pickFimTemplate(Object.fromEntries(tok.addedTokens)) ?? undefined;
  const specials = template ? template.fim('', '').flatMap((p) => ('special' in p ? [p.special] : [])) : [];
  const check = await checkServerTokenizer(o, tok, name, specials);
  if (check.verdict === 'same') {
    for (const s of servers) s.tokenizesAs(tok);
    return { check, template };
  }
  if (check.verdict !== 'ids') return { check };
  for (const s of servers) s.useTokenIds(tok);
  return { check, template };
}
