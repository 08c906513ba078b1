import type { FimTemplate } from '../completion/prompt/fimTemplates';
import type { ServerOptions } from './serverOptions';
import { postToRoot, tokenIds } from './tokenizeRoutes';

export interface FimProbe {
  /** ok: every marker is one token of the served model; missing: some are not; unchecked: the server could not say. */
  verdict: 'ok' | 'missing' | 'unchecked';
  /** One line for the log (and, for `missing`, the status bar). */
  message: string;
}

/**
 * At connect, when Ghostline sends its own fill-in-the-middle prompt as text (an OpenAI-compatible server, or
 * Ollama told a family): whether the served model has the template's markers as tokens of its own. A model
 * without them reads `<|fim_prefix|>` as a dozen characters of text and writes nonsense, and nothing else
 * would say so. Asked of the server's /tokenize with special tokens parsed (llama.cpp `parse_special`, vLLM
 * by default): each marker must come back as exactly one token. Never throws.
 */
export async function probeFimMarkers(o: ServerOptions, template: FimTemplate): Promise<FimProbe> {
  const markers = template.fim('', '').flatMap((p) => ('special' in p ? [p.special] : []));
  const missing: string[] = [];
  try {
    for (const marker of markers) {
      const body = { content: marker, prompt: marker, model: o.model, add_special: false, add_special_tokens: false, parse_special: true };
      if (tokenIds(await postToRoot(o, '/tokenize', body)).length !== 1) missing.push(marker);
    }
  } catch (err) {
    return {
      verdict: 'unchecked',
      message: `the ${template.family} FIM markers were not checked: /tokenize ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  if (missing.length === 0) return { verdict: 'ok', message: `the served model has the ${template.family} FIM markers (${markers.join(' ')})` };
  return {
    verdict: 'missing',
    message:
      `the served model has no ${missing.join(' ')} token${missing.length > 1 ? 's' : ''}: Ghostline's ${template.family} fill-in-the-middle prompts ` +
      "reach it as plain text and suggestions may be poor (set ghostline.server.promptFormat to the model's family)",
  };
}
