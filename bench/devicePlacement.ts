// A child of bench:device: opens one graph on the WebGPU provider with onnxruntime's verbose log, which prints
// how many nodes each provider took ("Node(s) placed on [...]"), then exits.
import { InferenceSession } from 'onnxruntime-node';

async function main(): Promise<void> {
  const session = await InferenceSession.create(process.argv[2], { executionProviders: ['webgpu'], logSeverityLevel: 0, logVerbosityLevel: 0 });
  await session.release();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
