import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where Debian's chromium (and Ubuntu's, and a local Chrome for Testing) put SwiftShader's Vulkan ICD file. */
const ICD_CANDIDATES = [
  '/usr/lib/chromium/vk_swiftshader_icd.json',
  '/usr/lib/chromium-browser/vk_swiftshader_icd.json',
  '/opt/google/chrome/vk_swiftshader_icd.json',
];

/** The Vulkan loader's library names on Linux: the loader (libvulkan1) must be installed for Dawn to find any device. */
const LOADER_CANDIDATES = ['/usr/lib/x86_64-linux-gnu/libvulkan.so.1', '/lib/x86_64-linux-gnu/libvulkan.so.1', '/usr/lib64/libvulkan.so.1'];

/**
 * The environment that makes onnxruntime's WebGPU provider (Dawn on Vulkan) run on SwiftShader, a Vulkan
 * implementation on the CPU: the ICD file and a runtime folder. Null, with what is missing, when this machine
 * has no SwiftShader or no Vulkan loader. SwiftShader proves correctness, never speed.
 */
export function swiftShaderEnv(): { env: Record<string, string> } | { missing: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { missing: 'SwiftShader through onnxruntime-node is checked on linux-x64 only' };
  const icd = ICD_CANDIDATES.find((f) => fs.existsSync(f));
  if (!icd) return { missing: 'no SwiftShader ICD (apt-get install chromium: it ships vk_swiftshader_icd.json)' };
  if (!LOADER_CANDIDATES.some((f) => fs.existsSync(f))) return { missing: 'no Vulkan loader (apt-get install libvulkan1)' };
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-xdg-'));
  return { env: { VK_ICD_FILENAMES: icd, XDG_RUNTIME_DIR: runtime } };
}

/**
 * Sets this process up for SwiftShader, before any WebGPU session opens. Returns the reason to skip when it
 * cannot, except in CI, where a missing SwiftShader is a failure (CI installs it: a skipped GPU test must not
 * pass as green).
 */
export function useSwiftShader(): string | false {
  const found = swiftShaderEnv();
  if ('env' in found) {
    Object.assign(process.env, found.env);
    return false;
  }
  if (process.env.CI) throw new Error(`the GPU tests need SwiftShader in CI: ${found.missing}`);
  return found.missing;
}
