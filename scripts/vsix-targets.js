// The platforms Ghostline ships a .vsix for, and what each must carry. One table for scripts/package.js (what
// goes in) and scripts/vsix-check.js (what a built .vsix is checked against).
//
// onnxruntime-node's npm package holds every platform's runtime (about 290 MB). A target takes only its own
// binding and the shared library the binding links to. Left out on purpose:
// - darwin: libonnxruntime.1.30.0.dylib, a second full copy of the library; the binding loads
//   @rpath/libonnxruntime.1.dylib (read from its load commands);
// - win32: DirectML.dll (delay-loaded by onnxruntime.dll, only for the DirectML execution provider) and
//   dxcompiler.dll / dxil.dll (loaded on demand by the WebGPU provider). Ghostline asks for the CPU provider
//   only, and together they are 38 MB of the 67 MB.

/** @typedef {{ platform: string, arch: string, binding: string, runtime: string }} VsixTarget */

const ORT_BIN = 'node_modules/onnxruntime-node/bin/napi-v6';

/** @type {Record<string, VsixTarget>} */
const TARGETS = {
  'linux-x64': { platform: 'linux', arch: 'x64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.so.1' },
  'linux-arm64': { platform: 'linux', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.so.1' },
  'darwin-arm64': { platform: 'darwin', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'libonnxruntime.1.dylib' },
  'win32-x64': { platform: 'win32', arch: 'x64', binding: 'onnxruntime_binding.node', runtime: 'onnxruntime.dll' },
  'win32-arm64': { platform: 'win32', arch: 'arm64', binding: 'onnxruntime_binding.node', runtime: 'onnxruntime.dll' },
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

/** The host's own target name (process.platform-process.arch), whether or not Ghostline ships one for it. */
function hostTarget() {
  return `${process.platform}-${process.arch}`;
}

module.exports = { TARGETS, UNIVERSAL, ORT_BIN, MAX_VSIX_BYTES, targetOf, nativeDir, hostTarget };
