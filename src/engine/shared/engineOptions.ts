/** How the worker loads and runs a model: options the extension host sends across the process boundary. */
export interface EngineOptions {
  /** Intra-op threads; 0 picks a default from the CPU count. */
  threads?: number;
  /** A file name (or path relative to the folder) to use instead of the preferred one. */
  onnxFile?: string;
  /** Prompt tokens per prefill call: a cancel waits for at most one chunk. */
  prefillChunk?: number;
}
