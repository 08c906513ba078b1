import * as path from 'node:path';
import { readNativeRequirements } from '../shared/nativeRequirements';
import { explainNativeLoad, NATIVE_LOAD_ERROR, nativeLoadMessage, type NativeLoadFailure } from '../shared/nativeLoad';

/** A failed load of onnxruntime-node's native code: the OS message, the file it names and what to do. */
class NativeLoadError extends Error {
  constructor(readonly failure: NativeLoadFailure) {
    super(nativeLoadMessage(failure));
    this.name = NATIVE_LOAD_ERROR;
  }
}

type EngineModule = typeof import('./engine');
let loaded: EngineModule | null = null;

/**
 * The engine, with onnxruntime-node behind it, loaded on the first request instead of at the worker's start:
 * a native library that cannot load (a missing C++ runtime, an old macOS, a damaged file) then fails that
 * request with a typed error the editor can show, instead of killing the worker before it can answer.
 * A failure is not remembered, so the next load tries again (after the user installed what was missing).
 */
export async function loadEngineModule(): Promise<EngineModule> {
  if (loaded) return loaded;
  try {
    loaded = await import('./engine');
    return loaded;
  } catch (err) {
    const vcRuntimeDlls = readNativeRequirements(__dirname)?.vcRuntimeDlls;
    throw new NativeLoadError(explainNativeLoad(err, bindingPath(), { platform: process.platform, arch: process.arch, vcRuntimeDlls }));
  }
}

/** Where onnxruntime-node keeps this platform's binding (its dist/binding.js requires this path). */
function bindingPath(): string {
  const rel = path.join('bin', 'napi-v6', process.platform, process.arch, 'onnxruntime_binding.node');
  try {
    return path.join(path.dirname(require.resolve('onnxruntime-node/package.json')), rel);
  } catch {
    return path.join('node_modules', 'onnxruntime-node', rel);
  }
}
