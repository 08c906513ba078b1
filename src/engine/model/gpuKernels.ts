import type { onnx } from 'onnx-proto';

/**
 * Matrix products that onnxruntime's WebGPU provider has no kernel for (onnxruntime-node 1.30; the gpu tier
 * checks each against the provider: test/engine/gpuKernels.gpu.test.ts). Optimum's and onnxruntime's int8
 * exports (`model_quantized.onnx`, `model_int8.onnx`) are made of them: in a GPU session their products run on
 * the CPU, with copies to and from the GPU around each. MatMulNBits (q4) and float MatMul have kernels.
 */
export const PRODUCTS_WITHOUT_WEBGPU_KERNEL: readonly string[] = ['MatMulInteger', 'DynamicQuantizeMatMul', 'MatMulIntegerToFloat', 'QLinearMatMul'];

/**
 * What a GPU session of this graph runs on the CPU, in the user's words, with what to pick instead; null when
 * every matrix product has a WebGPU kernel. Subgraphs (a merged decoder's branches) are read too.
 */
export function productsOnCpu(model: onnx.IModelProto): string | null {
  const found = new Set<string>();
  const walk = (g: onnx.IGraphProto | null | undefined) => {
    for (const n of g?.node ?? []) {
      if (n.opType && PRODUCTS_WITHOUT_WEBGPU_KERNEL.includes(n.opType)) found.add(n.opType);
      for (const a of n.attribute ?? []) for (const sub of [a.g, ...(a.graphs ?? [])]) walk(sub);
    }
  };
  walk(model.graph);
  if (found.size === 0) return null;
  return (
    `its int8 matrix products (${[...found].sort().join(', ')}) have no WebGPU kernel and run on the CPU; ` +
    "the model's q4 or float16 file, or a converted checkpoint, runs them on the GPU"
  );
}
