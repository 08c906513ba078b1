import type { ServerKind } from './protocols';

/** Where a server is and how to talk to it: every request to it (probe, tokenizer check, generation) takes these. */
export interface ServerOptions {
  kind: ServerKind;
  /** Base URL, e.g. http://127.0.0.1:8080 (no trailing path). */
  url: string;
  /** Model name (OpenAI-compatible servers and Ollama; llama.cpp serves one model). */
  model?: string;
  apiKey?: string;
  /** The longest a request may take before it is abandoned with an error. */
  timeoutMs: number;
  /** The HTTP client (proxy and CA settings applied); the global fetch when absent. */
  fetch?: typeof fetch;
}
