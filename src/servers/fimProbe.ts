import { FIM_MARKER_SETS, type FimTemplate, pickFimTemplate } from '../completion/prompt/fimTemplates';
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
  const markers = fimMarkers(template);
  const missing: string[] = [];
  try {
    for (const marker of markers) if (!(await isOneToken(o, marker))) missing.push(marker);
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
      "reach it as plain text and suggestions may be poor (set ghostline.server.promptFormat to auto or to the model's family)",
  };
}

export interface FimDetection {
  /** found: the served model has a family's markers; none: it has no family's; unchecked: the server could not say. */
  verdict: 'found' | 'none' | 'unchecked';
  /** The family found (its optional tokens, a file separator, only where the model has them too). */
  template: FimTemplate | null;
  message: string;
}

/**
 * Text that no tokenizer has as one token: a /tokenize that answers one token for it answers one for anything
 * (a stand-in that ignores the text), and its word on the markers means nothing.
 */
const NOT_A_TOKEN = '<|ghostline: not one token|>';

/**
 * `promptFormat: auto` for a server Ghostline sends its own prompt to as text: the family is read off the
 * served model's vocabulary (each family's markers asked of /tokenize), not guessed from its name, which a
 * served name (vLLM's --served-model-name, llama.cpp's --alias, a gateway's) need not carry. Each family's
 * first marker is asked first; the rest only of the families that have it. Never throws.
 */
export async function detectFimTemplate(o: ServerOptions): Promise<FimDetection> {
  try {
    const families = FIM_MARKER_SETS;
    const leads = [...new Set(families.map((tokens) => tokens[0]))];
    const [control, ...hits] = await Promise.all([NOT_A_TOKEN, ...leads].map((m) => isOneToken(o, m)));
    if (control) return { verdict: 'unchecked', template: null, message: 'the served FIM markers were not read: /tokenize answers one token for any text' };
    const found = new Set(leads.filter((_, i) => hits[i]));
    const rest = [...new Set(families.filter((tokens) => found.has(tokens[0])).flatMap((tokens) => tokens.slice(1)))];
    const restHits = await Promise.all(rest.map((m) => isOneToken(o, m)));
    for (const [i, m] of rest.entries()) if (restHits[i]) found.add(m);
    const template = pickFimTemplate(found);
    if (!template)
      return { verdict: 'none', template: null, message: 'the served model has the FIM markers of no family Ghostline knows: prefix-only prompts' };
    return { verdict: 'found', template, message: `the served model has the ${template.family} FIM markers (${[...found].join(' ')}): its prompts use them` };
  } catch (err) {
    return {
      verdict: 'unchecked',
      template: null,
      message: `the served FIM markers were not read: /tokenize ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

function fimMarkers(template: FimTemplate): string[] {
  return template.fim('', '').flatMap((p) => ('special' in p ? [p.special] : []));
}

async function isOneToken(o: ServerOptions, text: string): Promise<boolean> {
  const body = { content: text, prompt: text, model: o.model, add_special: false, add_special_tokens: false, parse_special: true };
  return tokenIds(await postToRoot(o, '/tokenize', body)).length === 1;
}
