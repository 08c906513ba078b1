// A child of bench:device: opens one graph on the WebGPU provider with onnxruntime's verbose log, which prints
// how many nodes each provider took ("Node(s) placed on [...]"), then exits. A graph is opened as the GPU
// runs it: the variant that keeps the KV cache there (deviceCacheVariant.ts).
import * as path from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { deviceCacheVariant, readGraph } from '../src/engine/model/deviceCacheVariant';

async function main(): Promise<void> {
  const file = process.argv[2];
  const verbose = { executionProviders: ['webgpu'], logSeverityLevel: 0, logVerbosityLevel: 0 } as const;
  const variant = deviceCacheVariant(readGraph(file));
  const session =
    'bytes' in variant
      ? await InferenceSession.create(variant.bytes, { ...verbose, extra: { session: { model_external_initializers_file_folder_path: path.dirname(file) } } })
      : await InferenceSession.create(file, verbose);
  await session.release();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
