import { FIM_FAMILIES, fimTemplateForFamily, type FimTemplate } from '../completion/prompt/fimTemplates';
import { validateValue } from '../completion/settingsSchema';
import { SERVER_KINDS, type ServerKind } from './protocols';

export type BackendKind = 'local' | ServerKind;

/** Where suggestions come from, read from user settings only (a workspace must not send code to a server it names). */
export interface ServerSettings {
  backend: BackendKind;
  url: string;
  model: string;
  /** FIM format of the served model: 'auto' guesses it from the model name. */
  promptFormat: string;
  timeoutMs: number;
  fallbackToLocal: boolean;
  /** Context window of the served model in tokens; 0: ask the server. */
  contextTokens: number;
  caFile: string;
}

interface ServerSettingSpec {
  key: keyof ServerSettings;
  /** Its name under `ghostline.`. */
  setting: string;
  type: 'string' | 'integer' | 'boolean';
  default: string | number | boolean;
  enum?: readonly string[];
  min?: number;
  max?: number;
  description: string;
}

/** One row per setting; package.json's `contributes.configuration` must agree (a test checks). */
export const SERVER_SETTINGS: readonly ServerSettingSpec[] = [
  {
    key: 'backend',
    setting: 'backend',
    type: 'string',
    default: 'local',
    enum: ['local', ...SERVER_KINDS],
    description:
      'Where suggestions come from: the model on this machine (local), or a team server: llama.cpp (llama-server /infill), openai (an OpenAI-compatible /v1/completions: vLLM, SGLang, LM Studio) or ollama. User settings only.',
  },
  { key: 'url', setting: 'server.url', type: 'string', default: '', description: 'Base URL of the completion server, e.g. https://llm.example.com:8000.' },
  {
    key: 'model',
    setting: 'server.model',
    type: 'string',
    default: '',
    description: 'Model name the server serves it under (required for openai and ollama; llama.cpp serves one model).',
  },
  {
    key: 'promptFormat',
    setting: 'server.promptFormat',
    type: 'string',
    default: 'auto',
    enum: ['auto', ...FIM_FAMILIES],
    description:
      "Fill-in-the-middle tokens of the served model (openai and ollama backends). auto: the family whose markers the served model has as tokens (asked of the server's /tokenize), else guessed from the model's name; a family named here also makes Ollama take Ghostline's own prompt (raw), with context from other files.",
  },
  {
    key: 'timeoutMs',
    setting: 'server.timeoutMs',
    type: 'integer',
    default: 4000,
    min: 200,
    max: 120000,
    description: 'A request to the server that has not finished after this many ms is abandoned.',
  },
  {
    key: 'fallbackToLocal',
    setting: 'server.fallbackToLocal',
    type: 'boolean',
    default: true,
    description: 'While the server cannot be reached, suggestions come from the local model; the server is retried with backoff.',
  },
  {
    key: 'contextTokens',
    setting: 'server.contextTokens',
    type: 'integer',
    default: 0,
    min: 0,
    max: 1048576,
    description: "The served model's context window in tokens (0: ask the server, else 8192).",
  },
  {
    key: 'caFile',
    setting: 'server.caFile',
    type: 'string',
    default: '',
    description: "PEM file of extra CA certificates to trust for the server (a company's private CA).",
  },
];

/**
 * Validates user-level values with the same rule as every other setting (settingsSchema's validateValue: a
 * wrong type ignored, a number clamped, each named). The problems also cover a configuration that cannot
 * work (a server backend without a URL).
 */
export function readServerSettings(raw: (setting: string) => unknown): { settings: ServerSettings; problems: string[] } {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const spec of SERVER_SETTINGS) {
    const r = validateValue(spec, raw(spec.setting), `ghostline.${spec.setting}`);
    out[spec.key] = r.value;
    if (r.problem) problems.push(r.problem);
  }
  const settings = out as unknown as ServerSettings;
  const blocking = serverConfigError(settings);
  if (blocking) problems.push(blocking);
  return { settings, problems };
}

/** Why these settings cannot reach a server (null: they can, or the backend is local). */
export function serverConfigError(s: ServerSettings): string | null {
  if (s.backend === 'local') return null;
  const urlProblem = checkUrl(s.url);
  if (urlProblem) return urlProblem;
  if (s.backend !== 'llama.cpp' && s.model === '') return `ghostline.server.model is required for the ${s.backend} backend.`;
  return null;
}

function checkUrl(url: string): string | null {
  if (url === '') return 'ghostline.server.url is empty: set the base URL of the server (e.g. http://127.0.0.1:8080).';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `ghostline.server.url ${JSON.stringify(url)} is not a URL.`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `ghostline.server.url must start with http:// or https://; got ${u.protocol}`;
  if (u.username || u.password) return 'ghostline.server.url must not hold a user or password: use "Ghostline: Set Server Key".';
  return null;
}

/**
 * Guesses the FIM format from a served model's name (Qwen/Qwen2.5-Coder-7B, starcoder2:3b, deepseek-coder-6.7b-base...),
 * where the server cannot say which markers its model has (Ollama, a server without /tokenize). CodeQwen1.5,
 * Granite Code and Stable Code were trained with StarCoder's markers.
 */
export function guessFimFamily(modelName: string): string | null {
  const n = modelName.toLowerCase();
  if (['starcoder', 'codeqwen', 'granite', 'stable-code'].some((s) => n.includes(s))) return 'starcoder';
  if (n.includes('qwen')) return 'qwen2.5-coder';
  if (n.includes('codegemma')) return 'codegemma';
  if (n.includes('deepseek')) return 'deepseek-coder';
  if (n.includes('codellama') || n.includes('code-llama')) return 'codellama';
  return null;
}

/**
 * The FIM template for the served model. null: prefix-only prompts (a model whose format is unknown still
 * gets a useful continuation; llama.cpp's /infill and Ollama's suffix use the server's own template anyway).
 */
export function serverTemplate(s: Pick<ServerSettings, 'promptFormat' | 'model'>): FimTemplate | null {
  const family = s.promptFormat === 'auto' ? guessFimFamily(s.model) : s.promptFormat;
  return family ? fimTemplateForFamily(family) : null;
}
