// What a native binary needs from the machine that loads it, read from its own headers (no otool, objdump or
// dumpbin needed, so every target is read on any machine):
// - ELF (Linux): the libraries it names (DT_NEEDED) and the newest glibc / libstdc++ symbol versions it asks for;
// - Mach-O (macOS): the minimum macOS (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) and the libraries it loads;
// - PE (Windows): the machine, the DLLs it imports (and delay-loads), and whether it carries a signature.
// scripts/package.js writes a target's facts into dist/native.json (read by the engine before it starts the
// worker); scripts/vsix-check.js checks them against the binaries in the package.

/** @typedef {{ format: 'elf', machine: string, needed: string[], glibc: string | null, glibcxx: string | null }} ElfFacts */
/** @typedef {{ format: 'macho', machine: string, minMacOS: string | null, dylibs: string[] }} MachOFacts */
/** @typedef {{ format: 'pe', machine: string, imports: string[], delayImports: string[], signed: boolean }} PeFacts */
/** @typedef {ElfFacts | MachOFacts | PeFacts} NativeFacts */

/** @param {Buffer} buf */
function readFacts(buf) {
  if (buf.length >= 4 && buf.readUInt32BE(0) === 0x7f454c46) return elfFacts(buf);
  if (buf.length >= 4 && [0xfeedfacf, 0xcafebabe].includes(buf.readUInt32LE(0) === 0xfeedfacf ? 0xfeedfacf : buf.readUInt32BE(0))) return machOFacts(buf);
  if (buf.length >= 0x40 && buf.toString('latin1', 0, 2) === 'MZ') return peFacts(buf);
  throw new Error('not an ELF, Mach-O or PE file');
}

/** The newest `PREFIX_x.y[.z]` version named in the file (symbol versions live in .dynstr as plain strings). */
function newestVersion(/** @type {Buffer} */ buf, /** @type {string} */ prefix) {
  const re = new RegExp(`${prefix}_(\\d+(?:\\.\\d+)+)\\0`, 'g');
  /** @type {string | null} */
  let best = null;
  for (const m of buf.toString('latin1').matchAll(re)) if (!best || compareVersions(m[1], best) > 0) best = m[1];
  return best;
}

/** Compares dotted versions numerically: '2.29' > '2.3'. */
function compareVersions(/** @type {string} */ a, /** @type {string} */ b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const ELF_MACHINES = new Map([
  [0x3e, 'x64'],
  [0xb7, 'arm64'],
]);

/** @param {Buffer} buf @returns {ElfFacts} */
function elfFacts(buf) {
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('only 64-bit little-endian ELF files are read');
  const machine = ELF_MACHINES.get(buf.readUInt16LE(0x12)) ?? `machine 0x${buf.readUInt16LE(0x12).toString(16)}`;
  const phoff = Number(buf.readBigUInt64LE(0x20));
  const phentsize = buf.readUInt16LE(0x36);
  const phnum = buf.readUInt16LE(0x38);
  /** @type {{ vaddr: number, offset: number, size: number }[]} */
  const loads = [];
  /** @type {{ offset: number, size: number } | null} */
  let dynamic = null;
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    const type = buf.readUInt32LE(p);
    const offset = Number(buf.readBigUInt64LE(p + 8));
    const vaddr = Number(buf.readBigUInt64LE(p + 16));
    const size = Number(buf.readBigUInt64LE(p + 32));
    if (type === 1) loads.push({ vaddr, offset, size });
    if (type === 2) dynamic = { offset, size };
  }
  /** @type {string[]} */
  const needed = [];
  if (dynamic) {
    /** @type {number[]} */
    const neededAt = [];
    let strtab = 0;
    for (let p = dynamic.offset; p + 16 <= dynamic.offset + dynamic.size; p += 16) {
      const tag = Number(buf.readBigUInt64LE(p));
      const val = Number(buf.readBigUInt64LE(p + 8));
      if (tag === 0) break;
      if (tag === 1) neededAt.push(val);
      if (tag === 5) strtab = val;
    }
    const seg = loads.find((l) => strtab >= l.vaddr && strtab < l.vaddr + l.size);
    const base = seg ? strtab - seg.vaddr + seg.offset : strtab;
    for (const at of neededAt) needed.push(cString(buf, base + at));
  }
  return { format: 'elf', machine, needed, glibc: newestVersion(buf, 'GLIBC'), glibcxx: newestVersion(buf, 'GLIBCXX') };
}

const MACHO_CPUS = new Map([
  [0x01000007, 'x64'],
  [0x0100000c, 'arm64'],
]);

/** @param {Buffer} buf @returns {MachOFacts} */
function machOFacts(buf) {
  let at = 0;
  if (buf.readUInt32BE(0) === 0xcafebabe) {
    // A universal binary: read the arm64 slice, else the first.
    const n = buf.readUInt32BE(4);
    const slices = Array.from({ length: n }, (_, i) => ({ cpu: buf.readUInt32BE(8 + i * 20), offset: buf.readUInt32BE(8 + i * 20 + 8) }));
    at = (slices.find((s) => s.cpu === 0x0100000c) ?? slices[0])?.offset ?? 0;
  }
  if (buf.readUInt32LE(at) !== 0xfeedfacf) throw new Error('only 64-bit Mach-O files are read');
  const machine = MACHO_CPUS.get(buf.readUInt32LE(at + 4)) ?? `cpu 0x${buf.readUInt32LE(at + 4).toString(16)}`;
  const ncmds = buf.readUInt32LE(at + 16);
  /** @type {string | null} */
  let minMacOS = null;
  /** @type {string[]} */
  const dylibs = [];
  let p = at + 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(p);
    const size = buf.readUInt32LE(p + 4);
    if (cmd === 0x32 /* LC_BUILD_VERSION */ && buf.readUInt32LE(p + 8) === 1 /* PLATFORM_MACOS */) minMacOS = machOVersion(buf.readUInt32LE(p + 12));
    if (cmd === 0x24 /* LC_VERSION_MIN_MACOSX */ && !minMacOS) minMacOS = machOVersion(buf.readUInt32LE(p + 8));
    // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB: the name is at an offset inside the command.
    if (cmd === 0xc || cmd === 0x80000018 || cmd === 0x8000001f) dylibs.push(cString(buf, p + buf.readUInt32LE(p + 8)));
    p += size;
  }
  return { format: 'macho', machine, minMacOS, dylibs };
}

/** Mach-O packs versions as xxxx.yy.zz in nibbles: 0x000e0000 is 14.0. */
function machOVersion(/** @type {number} */ v) {
  const patch = v & 0xff;
  return `${v >>> 16}.${(v >>> 8) & 0xff}${patch ? `.${patch}` : ''}`;
}

const PE_MACHINES = new Map([
  [0x8664, 'x64'],
  [0xaa64, 'arm64'],
  [0x14c, 'x86'],
]);

/** @param {Buffer} buf @returns {PeFacts} */
function peFacts(buf) {
  const pe = buf.readUInt32LE(0x3c);
  if (buf.toString('latin1', pe, pe + 4) !== 'PE\0\0') throw new Error('no PE signature');
  const coff = pe + 4;
  const machine = PE_MACHINES.get(buf.readUInt16LE(coff)) ?? `machine 0x${buf.readUInt16LE(coff).toString(16)}`;
  const nsections = buf.readUInt16LE(coff + 2);
  const optSize = buf.readUInt16LE(coff + 16);
  const opt = coff + 20;
  const pe32plus = buf.readUInt16LE(opt) === 0x20b;
  const dirs = opt + (pe32plus ? 112 : 96);
  const dir = (/** @type {number} */ i) => ({ rva: buf.readUInt32LE(dirs + i * 8), size: buf.readUInt32LE(dirs + i * 8 + 4) });
  const sections = Array.from({ length: nsections }, (_, i) => {
    const s = opt + optSize + i * 40;
    return { vaddr: buf.readUInt32LE(s + 12), vsize: Math.max(buf.readUInt32LE(s + 8), buf.readUInt32LE(s + 16)), raw: buf.readUInt32LE(s + 20) };
  });
  const offsetOf = (/** @type {number} */ rva) => {
    const s = sections.find((x) => rva >= x.vaddr && rva < x.vaddr + x.vsize);
    if (!s) throw new Error(`RVA 0x${rva.toString(16)} is in no section`);
    return rva - s.vaddr + s.raw;
  };
  /** Import descriptors are 20 bytes with the name's RVA at 12; delay-load ones 32 bytes with it at 4. */
  const names = (/** @type {{ rva: number }} */ d, /** @type {number} */ stride, /** @type {number} */ nameAt) => {
    /** @type {string[]} */
    const out = [];
    if (!d.rva) return out;
    for (let p = offsetOf(d.rva); ; p += stride) {
      const nameRva = buf.readUInt32LE(p + nameAt);
      if (!nameRva) break;
      out.push(cString(buf, offsetOf(nameRva)));
    }
    return out;
  };
  // The security directory (4) holds an Authenticode signature; its "RVA" is a file offset.
  return { format: 'pe', machine, imports: names(dir(1), 20, 12), delayImports: names(dir(13), 32, 4), signed: dir(4).size > 0 };
}

function cString(/** @type {Buffer} */ buf, /** @type {number} */ at) {
  const end = buf.indexOf(0, at);
  return buf.toString('latin1', at, end < 0 ? buf.length : end);
}

// The Visual C++ runtime's DLLs: installed by Microsoft's redistributable, not by Windows itself. A binary that
// imports one needs it on the user's machine (or beside itself).
const VC_RUNTIME = /^(msvcp140(_\d+|_atomic_wait|_codecvt_ids)?|vcruntime140(_\d+)?|concrt140|vcomp140)\.dll$/i;

/**
 * What dist/native.json says about one target: the facts the engine checks before it starts the worker, and
 * what a load failure's hint names.
 * @param {NativeFacts} binding
 * @param {NativeFacts} runtime
 */
function requirementsOf(binding, runtime) {
  if (binding.format === 'macho' && runtime.format === 'macho') {
    const mins = [binding.minMacOS, runtime.minMacOS].filter((v) => v !== null);
    return { minMacOS: mins.sort(compareVersions).at(-1) ?? null };
  }
  if (binding.format === 'pe' && runtime.format === 'pe') {
    // Windows names are case-insensitive: one entry per DLL, spelt as the binary spells it first.
    const vc = new Map([...binding.imports, ...runtime.imports].filter((d) => VC_RUNTIME.test(d)).map((d) => [d.toLowerCase(), d]));
    return { vcRuntimeDlls: [...vc.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, d]) => d) };
  }
  if (binding.format === 'elf' && runtime.format === 'elf') {
    const newest = (/** @type {(string | null)[]} */ v) =>
      v
        .filter((x) => x !== null)
        .sort(compareVersions)
        .at(-1) ?? null;
    return { glibc: newest([binding.glibc, runtime.glibc]), glibcxx: newest([binding.glibcxx, runtime.glibcxx]) };
  }
  throw new Error(`the binding (${binding.format}) and the runtime (${runtime.format}) are not the same format`);
}

module.exports = { readFacts, elfFacts, machOFacts, peFacts, requirementsOf, compareVersions, VC_RUNTIME };
