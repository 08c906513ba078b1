import { GENERIC_CALIBRATION } from '../completion/gate/genericCalibration';
import { readCalibration } from '../completion/gate/readCalibration';
import type { FimTemplate } from '../completion/prompt/fimTemplates';
import type { ModelTraits } from '../completion/types';
import { detectFimTemplate, probeFimMarkers } from './fimProbe';
import { probeServer } from './probeServer';
import type { ServerKind } from './protocols';
import { ServerGenerator, type ServerSetup } from './serverGenerator';
import type { ServerOptions } from './serverOptions';
import { serverTemplate } from './serverSettings';
import { compareServerTokenizer } from './serverTokenizer';

/** Used when neither the settings nor the server say how long the served model's context is. */
export const FALLBACK_CONTEXT_TOKENS = 8192;
/** Generate from Selection writes far more than a suggestion: it gets at least this long. */
const GENERATE_TIMEOUT_MS = 60_000;
/** Connect-time questions (probe, tokenizer, FIM markers) wait at most this long. */
const PROBE_TIMEOUT_MS = 10_000;

/** "llama.cpp at http://host:8080": how logs, Show Stats and the status bar name a server. */
export function serverLabel(kind: string, url: string): string {
  return `${kind} at ${new URL(url).origin}`;
}

export interface ConnectRequest {
  kind: ServerKind;
  url: string;
  /** The served model's name (OpenAI-compatible servers and Ollama). */
  model?: string;
  apiKey?: string;
  /** The HTTP client (proxy and CA settings applied). */
  fetch?: typeof fetch;
  /** FIM format of the served model: 'auto' guesses it from the model name. */
  promptFormat: string;
  /** A suggestion's request timeout. */
  timeoutMs: number;
  /** The served model's context window in tokens; 0: ask the server. */
  contextTokens: number;
  /** The local model's folder: the server's tokenizer is compared with its, and its calibration used when they agree. */
  localModelDir?: string;
}

export interface ServerConnection {
  /** "llama.cpp at http://host:8080", for logs and the status bar. */
  label: string;
  /** For suggestions (the request's timeout). */
  inline: ServerGenerator;
  /** The same server for Generate from Selection (at least GENERATE_TIMEOUT_MS). */
  generate: ServerGenerator;
  /** The FIM layout of Ghostline's own prompts to this server; null: prefix-only prompts. */
  template: FimTemplate | null;
  traits: ModelTraits;
  /** What the user should be told once (a tokenizer that differs, FIM markers the model lacks). */
  warnings: string[];
  /** What was found, for the log. */
  notes: string[];
  /** One line for the log: the model, the context, the FIM format and the calibration. */
  summary: string;
  /** The server did not answer the probe: the generators go by the request alone, and requests will tell. */
  error: Error | null;
}

/**
 * Connects to a completion server the one way the editor, the CLI (`serve-stdio --backend`) and the tests do:
 * asks the server what it serves (context, whether it fills in the middle, whether it is llama.cpp's), compares
 * its tokenizer with the local model's (prompts as the local ids, or token healing on them), picks the FIM
 * layout and the calibration that fit, and checks that the served model has the layout's markers. The
 * generators are built with what was settled. Never throws: a server that does not answer gives `error`.
 */
export async function connectServer(r: ConnectRequest): Promise<ServerConnection> {
  const base: Omit<ServerOptions, 'timeoutMs'> = { kind: r.kind, url: r.url, model: r.model || undefined, apiKey: r.apiKey, fetch: r.fetch };
  const probeOpts: ServerOptions = { ...base, timeoutMs: Math.min(r.timeoutMs, PROBE_TIMEOUT_MS) };
  const label = serverLabel(r.kind, r.url);
  let template = serverTemplate({ promptFormat: r.promptFormat, model: r.model ?? '' });
  const traits: ModelTraits = {
    contextTokens: r.contextTokens || FALLBACK_CONTEXT_TOKENS,
    calibration: GENERIC_CALIBRATION,
    calibrationSource: 'generic (server)',
  };
  // Ollama with the FIM format named: Ghostline's own prompt, raw, which carries the extra context from other
  // files and the stable-to-volatile layout (Ollama's `suffix` builds prefix+suffix only).
  const setup: ServerSetup = { ownPrompt: r.kind === 'ollama' && r.promptFormat !== 'auto' && template !== null };
  const warnings: string[] = [];
  const notes: string[] = [];
  let models: string[] = [];
  let error: Error | null = null;
  try {
    const probe = await probeServer(probeOpts);
    models = probe.models;
    if (!r.contextTokens && probe.contextTokens) traits.contextTokens = probe.contextTokens;
    // A model the server cannot fill in the middle for (no "insert" template) gets Ghostline's prompt.
    if (probe.fillsInTheMiddle === false) setup.ownPrompt = true;
    // llama.cpp's routes take a grammar: token healing is steered there as the local engine does it.
    if (probe.llamaCpp) setup.grammar = true;
    let verdict: string | undefined;
    let localTemplate = false;
    if (r.localModelDir) {
      // The served model must read the token sequences the model was trained on (issue 27).
      const tokens = await compareServerTokenizer(probeOpts, r.localModelDir);
      verdict = tokens.check.verdict;
      Object.assign(setup, tokens.setup);
      if (tokens.template) {
        template = tokens.template;
        localTemplate = true;
      }
      // The served model reads the local model's own token sequences: its log-probabilities are the local
      // model's (eval:server-quality), so the local model's calibration gates them, not the generic one.
      if (verdict === 'same' || verdict === 'ids') {
        const cal = readCalibration(r.localModelDir);
        traits.calibration = cal.calibration;
        traits.calibrationSource = `${cal.source} (the server runs the local model's tokens)`;
      }
      (verdict === 'differs' ? warnings : notes).push(tokens.check.message);
    }
    const sendsIds = setup.tokenIds !== undefined || (r.kind === 'openai' && setup.healer !== undefined);
    const ownPrompt = r.kind === 'openai' || setup.ownPrompt || sendsIds;
    // Our FIM prompt as text: the served model must have its markers as tokens (with ids they were compared
    // above). Under auto, the family is the one whose markers it has; the name's guess stands if it cannot say.
    if (ownPrompt && !sendsIds && r.kind !== 'ollama' && verdict !== 'differs') {
      if (r.promptFormat === 'auto' && !localTemplate) {
        const found = await detectFimTemplate(probeOpts);
        if (found.verdict !== 'unchecked') template = found.template;
        else if (template) found.message += `; the ${template.family} format is guessed from the model's name`;
        notes.push(found.message);
      } else if (template) {
        const fim = await probeFimMarkers(probeOpts, template);
        (fim.verdict === 'missing' ? warnings : notes).push(fim.message);
      }
    }
  } catch (err) {
    error = err instanceof Error ? err : new Error(String(err));
  }
  const inline = new ServerGenerator({ ...base, timeoutMs: r.timeoutMs }, setup);
  const generate = new ServerGenerator({ ...base, timeoutMs: Math.max(GENERATE_TIMEOUT_MS, r.timeoutMs) }, setup);
  const ownPrompt = r.kind === 'openai' || inline.sendsOwnPrompt;
  const fim = ownPrompt ? `${template?.family ?? 'none (prefix-only prompts)'}${inline.sendsTokenIds ? ' as token ids' : ''}` : "the server's own template";
  const summary =
    `${label}: ${models.join(', ') || 'model unknown'}, context ${traits.contextTokens} tokens, FIM ${fim}, ` +
    `calibration ${traits.calibrationSource}${r.apiKey ? ', with an API key' : ''}`;
  return { label, inline, generate, template, traits, warnings, notes, summary, error };
}
