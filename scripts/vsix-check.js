// What a built .vsix must and must not hold, checked by scripts/package.js after every build (so packaging
// cannot break silently) and by test/package/vsix.test.ts. Reads the zip itself, not the folder it came from.
const fs = require('node:fs');
const path = require('node:path');
const yauzl = require('yauzl');
const grammars = require('../src/completion/syntax/grammars.json');
const { MAX_VSIX_BYTES, ORT_BIN, UNIVERSAL, nativeDir, nativeFiles, targetOf } = require('./vsix-targets');
const { VC_RUNTIME, readFacts, requirementsOf } = require('./native-facts');

const EXT = 'extension/';
const MODEL = 'models/ghostline-code-small';

/**
 * Every file entry of a zip, and a reader for one entry's bytes.
 * @param {string} file
 * @returns {Promise<{ names: string[], read: (name: string) => Promise<Buffer>, close: () => void }>}
 */
function openZip(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error(`cannot open ${file}`));
      /** @type {Map<string, import('yauzl').Entry>} */
      const entries = new Map();
      zip.on('entry', (/** @type {import('yauzl').Entry} */ e) => {
        if (!e.fileName.endsWith('/')) entries.set(e.fileName, e);
        zip.readEntry();
      });
      zip.on('error', reject);
      zip.on('end', () => {
        /** @param {string} name */
        const read = (name) =>
          new Promise((res, rej) => {
            const e = entries.get(name);
            if (!e) return rej(new Error(`${name} is not in ${file}`));
            zip.openReadStream(e, (err2, stream) => {
              if (err2 || !stream) return rej(err2 ?? new Error(`cannot read ${name}`));
              /** @type {Buffer[]} */
              const chunks = [];
              stream.on('data', (c) => chunks.push(c));
              stream.on('end', () => res(Buffer.concat(chunks)));
              stream.on('error', rej);
            });
          });
        resolve({ names: [...entries.keys()], read, close: () => zip.close() });
      });
      zip.readEntry();
    });
  });
}

/**
 * The problems with a target's .vsix, in words; empty when it is right.
 * @param {string} file
 * @param {string} targetName e.g. linux-x64
 * @returns {Promise<string[]>}
 */
async function checkVsix(file, targetName) {
  const target = targetName === UNIVERSAL ? null : targetOf(targetName);
  /** @type {string[]} */
  const problems = [];
  const size = fs.statSync(file).size;
  if (size > MAX_VSIX_BYTES) problems.push(`${(size / 2 ** 20).toFixed(1)} MiB, over the ${MAX_VSIX_BYTES / 2 ** 20} MiB limit`);
  const zip = await openZip(file);
  try {
    const files = zip.names.filter((n) => n.startsWith(EXT)).map((n) => n.slice(EXT.length));
    const has = new Set(files);
    const wasm = [grammars.runtime, ...Object.values(grammars.grammars)].map((g) => `dist/tree-sitter/${path.basename(g.path)}`);
    const required = [
      'package.json',
      'readme.md',
      'LICENSE.txt',
      'changelog.md',
      'dist/extension.js',
      'dist/worker.js',
      'dist/cli.js',
      'dist/tokenizerProbeThread.js',
      'dist/native.json',
      'media/next-edit.svg',
      ...wasm,
      `${MODEL}/config.json`,
      `${MODEL}/tokenizer.json`,
      `${MODEL}/tokenizer_config.json`,
      `${MODEL}/generation_config.json`,
      `${MODEL}/ghostline-calibration.json`,
      `${MODEL}/onnx/model_int8.onnx`,
      `${MODEL}/onnx/model_int8.onnx_data`,
      'node_modules/onnxruntime-node/package.json',
      'node_modules/onnxruntime-node/dist/index.js',
      'node_modules/onnxruntime-common/package.json',
      'node_modules/onnxruntime-common/dist/cjs/index.js',
      ...(target ? nativeFiles(target).map((f) => `${nativeDir(target)}/${f}`) : []),
    ];
    const lower = new Set(files.map((f) => f.toLowerCase()));
    for (const r of required) if (!has.has(r) && !lower.has(r.toLowerCase())) problems.push(`missing ${r}`);

    const shippedNative = files.filter((f) => f.startsWith(`${ORT_BIN}/`));
    const expectedNative = new Set(target ? nativeFiles(target).map((f) => `${nativeDir(target)}/${f}`) : []);
    for (const f of shippedNative) if (!expectedNative.has(f)) problems.push(`native file of another platform or provider: ${f}`);

    /** @type {[RegExp, string][]} */
    const forbidden = [
      [/^(src|test|tools|bench|scripts|docs|out|\.ci|\.e2e|test-results|media\/sample-workspace)\//, 'development files'],
      [/\.(ts|map)$/, 'TypeScript sources or source maps'],
      [/(^|\/)model\.safetensors$/, 'the training checkpoint'],
      [/\.vsix$/, 'another package'],
    ];
    for (const f of files) {
      if (f.startsWith('node_modules/') && !/^node_modules\/onnxruntime-(node|common)\//.test(f)) problems.push(`bundled dependency shipped again: ${f}`);
      for (const [re, why] of forbidden) if (re.test(f)) problems.push(`${why}: ${f}`);
    }
    if (target) problems.push(...(await checkNative(zip, target, targetName)));
    else problems.push(...(await checkUniversal(zip)));
    const manifest = JSON.parse((await zip.read(`${EXT}package.json`)).toString('utf8'));
    if (manifest.main !== './dist/extension.js') problems.push(`package.json main is ${manifest.main}`);
    const vsixManifest = (await zip.read('extension.vsixmanifest')).toString('utf8');
    if (target && !vsixManifest.includes(`TargetPlatform="${targetName}"`)) problems.push(`the manifest does not say TargetPlatform="${targetName}"`);
    if (!target && vsixManifest.includes('TargetPlatform=')) problems.push('the universal package names a TargetPlatform');
  } finally {
    zip.close();
  }
  return problems;
}

/**
 * The native files read from their headers: built for the target's machine, the binding linking the library
 * this package carries (a renamed library in a new onnxruntime release would otherwise ship a binding that
 * cannot load), no system dependency outside what each OS has (plus the Visual C++ runtime on Windows, which
 * the load failure's hint names), and dist/native.json saying what they really need.
 * @param {Awaited<ReturnType<typeof openZip>>} zip
 * @param {import('./vsix-targets').VsixTarget} target
 * @param {string} targetName
 * @returns {Promise<string[]>}
 */
async function checkNative(zip, target, targetName) {
  const at = `${EXT}${nativeDir(target)}/`;
  if (!zip.names.includes(at + target.binding) || !zip.names.includes(at + target.runtime)) return [];
  /** @type {string[]} */
  const problems = [];
  const binding = readFacts(await zip.read(at + target.binding));
  const runtime = readFacts(await zip.read(at + target.runtime));
  if (binding.machine !== target.arch) problems.push(`${target.binding} is built for ${binding.machine}, not ${target.arch}`);
  if (runtime.machine !== target.arch) problems.push(`${target.runtime} is built for ${runtime.machine}, not ${target.arch}`);
  for (const f of target.gpu ?? []) {
    if (!zip.names.includes(at + f)) continue; // reported as missing above
    const gpu = readFacts(await zip.read(at + f));
    if (gpu.machine !== target.arch) problems.push(`${f} is built for ${gpu.machine}, not ${target.arch}`);
  }

  const links =
    binding.format === 'elf' ? binding.needed : binding.format === 'macho' ? binding.dylibs.map((d) => d.replace(/^@rpath\//, '')) : binding.imports;
  if (!links.some((l) => l.toLowerCase() === target.runtime.toLowerCase()))
    problems.push(`${target.binding} does not link ${target.runtime} (it links ${links.join(', ')})`);
  const outside = systemDependenciesOutside(binding, runtime, target.runtime);
  if (outside.length > 0) problems.push(`the native files need libraries the OS does not provide: ${outside.join(', ')}`);
  const written = JSON.parse((await zip.read(`${EXT}dist/native.json`).catch(() => Buffer.from('{}'))).toString('utf8'));
  const expected = { target: targetName, ...requirementsOf(binding, runtime) };
  for (const [key, value] of Object.entries(expected)) {
    if (JSON.stringify(written[key]) !== JSON.stringify(value))
      problems.push(`dist/native.json says ${key} ${JSON.stringify(written[key])}, the binaries ${JSON.stringify(value)}`);
  }
  return problems;
}

/**
 * The universal package says it has no local engine, so the engine refuses before it starts a worker.
 * @param {Awaited<ReturnType<typeof openZip>>} zip
 */
async function checkUniversal(zip) {
  const written = JSON.parse((await zip.read(`${EXT}dist/native.json`).catch(() => Buffer.from('{}'))).toString('utf8'));
  return written.target === UNIVERSAL && written.localEngine === false ? [] : [`dist/native.json of the universal package says ${JSON.stringify(written)}`];
}

// What each OS provides to every process: on Windows the system DLLs (and the Visual C++ runtime, which the
// hint names); on macOS the system's libraries and frameworks; on Linux the C and C++ runtimes.
const WINDOWS_SYSTEM = /^(api-ms-win-.*|kernel32|user32|shell32|setupapi|dbghelp|advapi32|ole32|oleaut32|ws2_32|bcrypt|ntdll|d3d12|dxgi|node)\.(dll|exe)$/i;
const MAC_SYSTEM = /^(\/System\/Library\/Frameworks\/|\/usr\/lib\/)/;
const LINUX_SYSTEM = /^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux-[\w-]+)\.so\.\d+$/;

/**
 * @param {import('./native-facts').NativeFacts} binding
 * @param {import('./native-facts').NativeFacts} runtime
 * @param {string} ownLibrary
 */
function systemDependenciesOutside(binding, runtime, ownLibrary) {
  /** @type {string[]} */
  const deps = [];
  for (const f of [binding, runtime]) {
    if (f.format === 'elf') deps.push(...f.needed.filter((d) => !LINUX_SYSTEM.test(d)));
    // Delay-loaded DLLs are loaded only by the providers that use them (DirectML, WebGPU), never by the CPU one.
    if (f.format === 'pe') deps.push(...f.imports.filter((d) => !WINDOWS_SYSTEM.test(d) && !VC_RUNTIME.test(d)));
    if (f.format === 'macho') deps.push(...f.dylibs.filter((d) => !MAC_SYSTEM.test(d)).map((d) => d.replace(/^@rpath\//, '')));
  }
  return [...new Set(deps.filter((d) => d.toLowerCase() !== ownLibrary.toLowerCase()))];
}

/**
 * The package's files under `dir`, as VS Code installs them (the zip's extension/ folder); returns that folder.
 * @param {string} vsix
 * @param {string} dir
 */
async function unpackVsix(vsix, dir) {
  const zip = await openZip(vsix);
  try {
    for (const name of zip.names.filter((n) => n.startsWith(EXT))) {
      const to = path.join(dir, name);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, await zip.read(name));
    }
  } finally {
    zip.close();
  }
  return path.join(dir, 'extension');
}

module.exports = { checkVsix, openZip, unpackVsix };
