/** Public surface of the checkpoint converter (Hugging Face safetensors -> Ghostline's lean ONNX graph). */

export type Quant = 'q4' | 'int8' | 'fp32';

export interface ConvertOptions {
  /** Hugging Face checkpoint folder: config.json, tokenizer.json, model.safetensors or a sharded set + index. */
  from: string;
  /** Model folder to write (must not exist, or be empty). Written under a temporary name and renamed at the end. */
  out: string;
  /** Weight format (default q4). */
  quant?: Quant;
  /** Weights per quantization block (default 32). */
  blockSize?: number;
  /** MatMulNBits accuracy_level (default 4: int8 activations on CPU). */
  accuracyLevel?: number;
  /**
   * With q4: bits of the embedding table and the output head (one table when tied). 8 keeps the logits closer
   * to fp32, as llama.cpp's 4-bit files keep their output tensor at 6 bits; default 4.
   */
  headBits?: 4 | 8;
  signal?: AbortSignal;
  onProgress?: (p: ConvertProgress) => void;
}

export interface ConvertProgress {
  /** Bytes of checkpoint tensors processed so far / in all. */
  doneBytes: number;
  totalBytes: number;
  /** Tensor being processed. */
  tensor: string;
}

export interface ConvertResult {
  out: string;
  /** The ONNX file written (inside out/onnx/). */
  onnxFile: string;
  /** Bytes written (graph + external data). */
  bytes: number;
  seconds: number;
  modelType: string;
  quant: Quant;
}
