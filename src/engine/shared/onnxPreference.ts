/**
 * The ONNX file Ghostline takes from a folder or a hub repo that has several, best first on a CPU. One list for
 * both: the engine loading a folder (engine/model/modelFolder.ts) and the downloader picking a file
 * (hub/recommended.ts). Within a name, `onnx/` comes before the root.
 *
 * 4-bit MatMulNBits first: measured on the Qwen2.5-Coder 0.5B shape (bench/README.md, "What was tried"), 8-bit
 * weights made the LM head 6.9 ms against 3.5 ms at 4 bits, so decode is bound by computing and fewer bits
 * win. Then int8 (`quantized` and `uint8` are int8 exports under other names), then fp32, then the Optimum
 * merged-decoder names in the same order. Anything with fp16 weights or activations (`q4f16` included) comes
 * last: onnxruntime's CPU provider runs fp16 through Cast fallbacks.
 */
export const ONNX_PREFERENCE: readonly string[] = Object.freeze([
  'model_q4.onnx',
  'model_int8.onnx',
  'model_quantized.onnx',
  'model_uint8.onnx',
  'model.onnx',
  'decoder_model_merged_q4.onnx',
  'decoder_model_merged_int8.onnx',
  'decoder_model_merged_quantized.onnx',
  'decoder_model_merged.onnx',
  'model_q4f16.onnx',
  'model_fp16.onnx',
  'decoder_model_merged_q4f16.onnx',
  'decoder_model_merged_fp16.onnx',
]);
