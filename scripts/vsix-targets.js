// The platforms Ghostline ships a .vsix for, and what each must carry. One table for scripts/package.js (what
// goes in) and scripts/vsix-check.js (what a built .vsix is checked against).
//
// onnxruntime-node's npm package holds every platform's runtime (about 290 MB). A target takes only its own
// binding and the shared library the binding links to. Left out on purpose:
// - darwin: libonnxruntime.1.30.0.dylib, a second full copy of the library; the binding loads
//   @rpath/libonnxruntime.1.dylib (read from its load commands);
// - win32: DirectML.dll (18 MB, delay-loaded by onnxruntime.dll, only for the DirectML execution provider, which
//   Ghostline never asks for).
// Kept on purpose: on win32, dxcompiler.dll / dxil.dll (20 MB, about 7 MB compressed), which the WebGPU provider
// loads when it opens a Direct3D 12 device: Dawn compiles its shaders with DXC, Windows does not ship DXC, and
// without it the shader-f16 feature (and, with some Dawn builds, the device itself) is not available.

/** @typedef {{ platform: string, arch: string, binding: string, runtime: string, gpu?: string[] }} VsixTarget */

const ORT_BIN = 'node_modules/onnxruntime-node/bin/napi-v6';

/** The DirectX shader compiler that the WebGPU provider loads on demand on Windows. */
const WIN_DXC = ['dxcompiler.dll', 'dxil.dll'];

/** @type {Record<string, VsixTarget>} */
const TARGETS = {
  'linux-x64': { platform: 'linux', arch: 'x64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.so.1' },
  'linux-arm64': { platform: 'linux', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.so.1' },
  'darwin-arm64': { platform: 'darwin', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.1.dylib' },
  'win32-x64': { platform: 'win32', arch: 'x64', binding: 'onnxruntime_binding.node', runtime: 'onnxruntime.dll', gpu: WIN_DXC },
  'win32-arm64': { platform: 'win32', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'onnxruntime.dll', gpu: WIN_DXC },
};

/**
 * The package for every other platform (Intel Macs, Alpine, FreeBSD...): no native runtime, so no local engine;
 * the Marketplace serves it where no target package matches, and Ghostline works there with a team server.
 */
const UNIVERSAL = 'universal';

/** The Marketplace's limit is far higher; this is ours, so that a stray folder cannot slip in unnoticed. */
const MAX_VSIX_BYTES = 40 * 1024 * 1024;

/** @param {string} name */
function targetOf(name) {
  const t = TARGETS[name];
  if (!t) throw new Error(`unknown target "${name}": one of ${Object.keys(TARGETS).join(', ')}`);
  return t;
}

/** The folder of a target's native files inside the package, e.g. node_modules/onnxruntime-node/bin/napi-v6/linux/x64. */
function nativeDir(/** @type {VsixTarget} */ t) {
  return `${ORT_BIN}/${t.platform}/${t.arch}`;
}

/** Every native file a target's package carries: the binding, its library, and what the GPU provider loads. */
function nativeFiles(/** @type {VsixTarget} */ t) {
  return [t.binding, t.runtime, ...(t.gpu ?? [])];
}

/** The host's own target name (process.platform-process.arch), whether or not Ghostline ships one for it. */
function hostTarget() {
  return `${process.platform}-${process.arch}`;
}

module.exports = { TARGETS, UNIVERSAL, ORT_BIN, MAX_VSIX_BYTES, targetOf, nativeDir, nativeFiles, hostTarget };
