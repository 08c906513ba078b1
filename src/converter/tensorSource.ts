/**
 * What the graph builder reads weights from: tensors by their Hugging Face names and shapes, as float32 row
 * ranges. A safetensors checkpoint (safetensors.ts) and a GGUF file (gguf/ggufCheckpoint.ts) both provide it,
 * so the lean graph is built the same way from either.
 */
export interface TensorInfo {
  /** The Hugging Face name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  /** The file that holds it (named in errors). */
  file: string;
  /** The stored element type, as the file names it (F32, BF16, Q8_0, ...). */
  dtype: string;
  /** The Hugging Face shape, outermost first. */
  shape: number[];
  /** Absolute byte offset of the data in the file. */
  offset: number;
  /** Bytes stored (the progress bar counts these). */
  bytes: number;
}

export interface TensorSource {
  /** The folder or file read, for messages. */
  readonly dir: string;
  readonly tensors: ReadonlyMap<string, TensorInfo>;
  get(name: string): TensorInfo | undefined;
  /** The tensor, checked against the shape the architecture expects. */
  require(name: string, shape: number[]): TensorInfo;
  /** Rows [r0, r1) of a tensor seen as [rows, cols] (cols = the product of the dims after the first), as float32. */
  readRows(t: TensorInfo, r0: number, r1: number): Float32Array;
  readAll(t: TensorInfo): Float32Array;
  close(): void;
}

export function rowLength(shape: number[]): number {
  return shape.slice(1).reduce((a, b) => a * b, 1);
}

/** Refuses NaN and infinities: a corrupt checkpoint must not become a model that answers garbage. */
export function checkFinite(v: Float32Array, file: string, tensor: string, error: (file: string, detail: string) => Error): void {
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) throw error(file, `tensor "${tensor}" holds a non-finite value (NaN or infinity): a corrupt checkpoint`);
  }
}
