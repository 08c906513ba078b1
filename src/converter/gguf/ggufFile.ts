import * as fs from 'node:fs';
import { ConvertError, openForReading } from '../errors';
import { GGML_TYPES, type GgmlType, UNREAD_GGML_TYPES } from './ggmlTypes';

/**
 * A reader of GGUF files (ggml's format: llama.cpp, Ollama and the hub's `*.gguf` downloads), versions 2 and 3.
 * Layout (ggml's docs/gguf.md): "GGUF", u32 version, u64 tensor count, u64 key/value count, the key/values
 * (metadata), the tensor infos (name, dims innermost first, ggml type, offset), padding to `general.alignment`
 * (32 by default), the tensor data. Everything little-endian.
 *
 * Only the header is read here (a few MB: the vocabulary and merges are metadata); the weights are read later,
 * row range by row range. A hostile or truncated file gets a message naming what is wrong, never a huge
 * allocation: every count and length is checked against the bytes that remain.
 */

export type GgufValue = number | bigint | boolean | string | GgufValue[];

export interface GgufTensor {
  name: string;
  /** ggml's order: dims[0] is the innermost (the length of a row). */
  dims: number[];
  type: GgmlType;
  /** Absolute byte offset of the data in the file. */
  offset: number;
  bytes: number;
}

export interface GgufHeader {
  file: string;
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: Map<string, GgufTensor>;
}

const MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
/** Bigger than any real vocabulary or merge list (Gemma's 256k tokens), small enough to refuse nonsense. */
const MAX_ARRAY = 1 << 24;
const MAX_STRING = 1 << 24;
const MAX_TENSORS = 1 << 20;
const MAX_KV = 1 << 20;

enum ValueType {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
}
const SCALAR_BYTES: Partial<Record<ValueType, number>> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/** Sequential reads through a buffer refilled with positioned reads. */
class Cursor {
  private buf = Buffer.alloc(1 << 20);
  private start = 0; // file offset of buf[0]
  private end = 0; // valid bytes in buf
  pos = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly bad: (detail: string) => ConvertError,
  ) {}

  private need(n: number): number {
    if (this.pos + n > this.size) throw this.bad(`ends at byte ${this.size} inside its header (truncated download?)`);
    if (this.pos < this.start || this.pos + n > this.start + this.end) {
      if (n > this.buf.length) this.buf = Buffer.alloc(n);
      this.start = this.pos;
      this.end = fs.readSync(this.fd, this.buf, 0, Math.min(this.buf.length, this.size - this.pos), this.pos);
    }
    const at = this.pos - this.start;
    this.pos += n;
    return at;
  }

  // `this.buf` is read before need() runs: safe, as need() replaces the buffer only for reads over its 1 MB size.
  u8 = () => this.buf.readUInt8(this.need(1));
  i8 = () => this.buf.readInt8(this.need(1));
  u16 = () => this.buf.readUInt16LE(this.need(2));
  i16 = () => this.buf.readInt16LE(this.need(2));
  u32 = () => this.buf.readUInt32LE(this.need(4));
  i32 = () => this.buf.readInt32LE(this.need(4));
  f32 = () => this.buf.readFloatLE(this.need(4));
  f64 = () => this.buf.readDoubleLE(this.need(8));
  i64 = () => this.buf.readBigInt64LE(this.need(8));
  u64big = () => this.buf.readBigUInt64LE(this.need(8));

  /** A u64 that must be a count or size that fits in the file: anything else is a corrupt header. */
  count(what: string, max: number): number {
    const v = this.u64big();
    if (v > BigInt(max)) throw this.bad(`${what} is ${v}, more than any real model has (corrupt header?)`);
    return Number(v);
  }

  string(what: string): string {
    const n = this.count(`the length of ${what}`, MAX_STRING);
    if (this.pos + n > this.size) throw this.bad(`${what} runs past the end of the file`);
    const at = this.need(n);
    return this.buf.toString('utf8', at, at + n);
  }
}

export function readGgufHeader(file: string): GgufHeader {
  const fd = openForReading(file);
  try {
    return parse(file, fd);
  } finally {
    fs.closeSync(fd);
  }
}

function parse(file: string, fd: number): GgufHeader {
  const size = fs.fstatSync(fd).size;
  const bad = (detail: string) => new ConvertError(file, `is not a valid GGUF file: ${detail}`);
  const c = new Cursor(fd, size, bad);
  if (size < 24 || c.u32() !== MAGIC) throw bad('it does not start with "GGUF"');
  const version = c.u32();
  if (version === 1) throw new ConvertError(file, 'is a GGUF version 1 file (2023): re-download it, current files are version 3');
  if (version !== 2 && version !== 3) throw bad(`version ${version} is not 2 or 3`);
  const tensorCount = c.count('the tensor count', MAX_TENSORS);
  const kvCount = c.count('the metadata count', MAX_KV);

  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = c.string(`metadata key ${i}`);
    metadata.set(key, readValue(c, c.u32(), key, bad));
  }

  const infos: { name: string; dims: number[]; type: GgmlType; rel: bigint }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = c.string(`the name of tensor ${i}`);
    const nDims = c.u32();
    if (nDims < 1 || nDims > 4) throw bad(`tensor "${name}" has ${nDims} dimensions (ggml has 1 to 4)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(c.count(`a dimension of tensor "${name}"`, Number.MAX_SAFE_INTEGER));
    const typeId = c.u32();
    const type = GGML_TYPES.get(typeId);
    if (!type) {
      const known = UNREAD_GGML_TYPES.get(typeId);
      throw new ConvertError(
        file,
        known
          ? `tensor "${name}" is stored as ${known}, which Ghostline does not read: pick the repo's Q8_0, F16, Q6_K, Q5_K_M or Q4_K_M file`
          : `tensor "${name}" has ggml type ${typeId}, which this version of Ghostline does not know`,
      );
    }
    infos.push({ name, dims, type, rel: c.u64big() });
  }

  const alignment = metadata.get('general.alignment') ?? 32;
  if (typeof alignment !== 'number' || !Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0 || alignment > 1 << 20) {
    throw bad(`general.alignment ${String(alignment)} is not a power of two`);
  }
  const dataStart = Math.ceil(c.pos / alignment) * alignment;
  const tensors = new Map<string, GgufTensor>();
  for (const t of infos) {
    if (tensors.has(t.name)) throw bad(`tensor "${t.name}" appears twice`);
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (!Number.isSafeInteger(elements) || elements === 0) throw bad(`tensor "${t.name}" has dims [${t.dims}]`);
    if (t.dims[0] % t.type.blockElements !== 0) {
      throw bad(`tensor "${t.name}" has rows of ${t.dims[0]} values, not a multiple of ${t.type.name}'s block of ${t.type.blockElements}`);
    }
    const bytes = (elements / t.type.blockElements) * t.type.blockBytes;
    if (t.rel % BigInt(alignment) !== 0n) throw bad(`tensor "${t.name}" starts at ${t.rel}, not a multiple of the alignment ${alignment}`);
    const offset = dataStart + Number(t.rel);
    if (t.rel > BigInt(size) || offset + bytes > size) {
      throw new ConvertError(file, `tensor "${t.name}" ends at byte ${offset + bytes} but the file has ${size} bytes (truncated download?)`);
    }
    tensors.set(t.name, { name: t.name, dims: t.dims, type: t.type, offset, bytes });
  }
  const byOffset = [...tensors.values()].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const [a, b] = [byOffset[i - 1], byOffset[i]];
    if (b.offset < a.offset + a.bytes) throw bad(`the data of tensors "${a.name}" and "${b.name}" overlap`);
  }
  return { file, version, metadata, tensors };
}

function readValue(c: Cursor, type: number, key: string, bad: (detail: string) => ConvertError): GgufValue {
  switch (type as ValueType) {
    case ValueType.U8:
      return c.u8();
    case ValueType.I8:
      return c.i8();
    case ValueType.U16:
      return c.u16();
    case ValueType.I16:
      return c.i16();
    case ValueType.U32:
      return c.u32();
    case ValueType.I32:
      return c.i32();
    case ValueType.F32:
      return c.f32();
    case ValueType.F64:
      return c.f64();
    case ValueType.Bool:
      return c.u8() !== 0;
    case ValueType.String:
      return c.string(`the value of ${key}`);
    case ValueType.U64: {
      const v = c.u64big();
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    case ValueType.I64: {
      const v = c.i64();
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
    }
    case ValueType.Array: {
      const elementType = c.u32();
      const n = c.count(`the length of ${key}`, MAX_ARRAY);
      if (elementType === ValueType.Array) throw bad(`${key} is an array of arrays`);
      const scalar = SCALAR_BYTES[elementType as ValueType];
      // Each element takes at least its scalar size (a string at least its 8-byte length): a count the file
      // cannot hold is refused before anything is allocated for it.
      if (c.pos + n * (scalar ?? 8) > c.size) throw bad(`${key} claims ${n} elements, more than the file holds`);
      const out: GgufValue[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = readValue(c, elementType, key, bad);
      return out;
    }
    default:
      throw bad(`metadata ${key} has value type ${type}, which GGUF does not define`);
  }
}
