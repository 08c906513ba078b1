import * as fs from 'node:fs';
import * as path from 'node:path';
import { halfToFloat } from '../engine/model/half';
import { ConvertError, openForReading } from './errors';
import { checkFinite, rowLength, type TensorInfo, type TensorSource } from './tensorSource';

/**
 * A streaming reader of Hugging Face safetensors checkpoints (one file or a sharded set with its index).
 * Nothing is read whole: tensors are read row range by row range with positioned reads, so a 1.5B
 * checkpoint converts in memory bounded by the largest row block, not by the file.
 *
 * Format: 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}} (plus
 * "__metadata__"), then the raw little-endian data; offsets are relative to the end of the header.
 */

export type SafeDtype = 'F32' | 'F16' | 'BF16';
const DTYPE_BYTES: Record<SafeDtype, number> = { F32: 4, F16: 2, BF16: 2 };
/** Header bigger than this is not a checkpoint header (real ones are well under 1 MB). */
const MAX_HEADER = 64 << 20;

export type { TensorInfo } from './tensorSource';

export class SafetensorsFile {
  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly tensors: Map<string, TensorInfo>,
    /** Tensors of other dtypes (int buffers, fp8...): an error only if the model needs one of them. */
    readonly unsupported: Map<string, string>,
  ) {}

  static open(file: string): SafetensorsFile {
    const fd = openForReading(file);
    try {
      const h = readHeader(file, fd);
      return new SafetensorsFile(file, fd, h.tensors, h.unsupported);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  /** Rows [r0, r1) of a tensor seen as [rows, cols] (cols = the product of all dims after the first), as float32. */
  readRows(t: TensorInfo, r0: number, r1: number): Float32Array {
    const cols = rowLength(t.shape);
    const dtype = t.dtype as SafeDtype;
    const size = DTYPE_BYTES[dtype];
    const n = (r1 - r0) * cols;
    const raw = new Uint8Array(n * size);
    const at = t.offset + r0 * cols * size;
    let got = 0;
    while (got < raw.length) {
      const k = fs.readSync(this.fd, raw, got, raw.length - got, at + got);
      if (k === 0) throw new ConvertError(this.file, `ends inside tensor "${t.name}" (truncated file?)`);
      got += k;
    }
    const v = toFloat32(raw, dtype, n);
    checkFinite(v, this.file, t.name, (file, detail) => new ConvertError(file, detail));
    return v;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** All tensors of a checkpoint folder, across shards. */
export class Checkpoint implements TensorSource {
  private constructor(
    readonly dir: string,
    private readonly files: SafetensorsFile[],
    readonly tensors: Map<string, TensorInfo>,
    private readonly unsupported: Map<string, string>,
  ) {}

  static open(dir: string): Checkpoint {
    const single = path.join(dir, 'model.safetensors');
    const index = path.join(dir, 'model.safetensors.index.json');
    let names: string[];
    if (fs.existsSync(index)) names = shardNames(index, dir);
    else if (fs.existsSync(single)) names = ['model.safetensors'];
    else {
      const others = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.bin') || f.endsWith('.pt')) : [];
      const hint = others.length ? ` (found ${others.join(', ')}: PyTorch pickles are not read, for safety; convert them to safetensors first)` : '';
      throw new ConvertError(dir, `has no model.safetensors nor model.safetensors.index.json${hint}`);
    }
    const files: SafetensorsFile[] = [];
    const tensors = new Map<string, TensorInfo>();
    const unsupported = new Map<string, string>();
    try {
      for (const name of names) {
        const f = SafetensorsFile.open(path.join(dir, name));
        files.push(f);
        for (const [k, t] of f.tensors) {
          if (tensors.has(k)) throw new ConvertError(f.file, `tensor "${k}" also appears in ${tensors.get(k)!.file}`);
          tensors.set(k, t);
        }
        for (const [k, why] of f.unsupported) unsupported.set(k, why);
      }
    } catch (err) {
      for (const f of files) f.close();
      throw err;
    }
    return new Checkpoint(dir, files, tensors, unsupported);
  }

  get(name: string): TensorInfo | undefined {
    return this.tensors.get(name);
  }

  /** The tensor, checked against the shape the architecture expects. */
  require(name: string, shape: number[]): TensorInfo {
    const t = this.tensors.get(name);
    const why = this.unsupported.get(name);
    if (why) throw new ConvertError(this.files.find((f) => f.unsupported.has(name))!.file, why);
    if (!t) throw new ConvertError(this.dir, `the checkpoint has no tensor "${name}"`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new ConvertError(t.file, `tensor "${name}" has shape [${t.shape}] but config.json implies [${shape}]`);
    }
    return t;
  }

  readRows(t: TensorInfo, r0: number, r1: number): Float32Array {
    return this.files.find((f) => f.file === t.file)!.readRows(t, r0, r1);
  }

  readAll(t: TensorInfo): Float32Array {
    return this.readRows(t, 0, t.shape.length ? t.shape[0] : 1);
  }

  close(): void {
    for (const f of this.files) f.close();
  }
}

function readHeader(file: string, fd: number): { tensors: Map<string, TensorInfo>; unsupported: Map<string, string> } {
  const size = fs.fstatSync(fd).size;
  const bad = (detail: string) => new ConvertError(file, `is not a valid safetensors file: ${detail}`);
  if (size < 8) throw bad(`only ${size} bytes`);
  const lenBuf = Buffer.alloc(8);
  fs.readSync(fd, lenBuf, 0, 8, 0);
  const headerLen = Number(lenBuf.readBigUInt64LE(0));
  if (headerLen > MAX_HEADER || 8 + headerLen > size) throw bad(`header length ${headerLen} does not fit a ${size}-byte file`);
  const headerBuf = Buffer.alloc(headerLen);
  fs.readSync(fd, headerBuf, 0, headerLen, 8);
  let header: unknown;
  try {
    header = JSON.parse(headerBuf.toString('utf8'));
  } catch (err) {
    throw bad(`header is not JSON (${(err as Error).message})`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) throw bad('header is not a JSON object');
  const dataStart = 8 + headerLen;
  const tensors = new Map<string, TensorInfo>();
  const unsupported = new Map<string, string>();
  for (const [name, v] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue;
    const e = v as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!e || typeof e !== 'object') throw bad(`entry "${name}" is not an object`);
    const dtype = e.dtype;
    if (typeof dtype !== 'string' || !(dtype in DTYPE_BYTES)) {
      unsupported.set(name, `tensor "${name}" has dtype ${JSON.stringify(dtype)}; only F32, F16 and BF16 are converted`);
      continue;
    }
    const shape = e.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw bad(`tensor "${name}" has shape ${JSON.stringify(shape)}`);
    const offs = e.data_offsets;
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isSafeInteger(o) && o >= 0) || offs[1] < offs[0]) {
      throw bad(`tensor "${name}" has data_offsets ${JSON.stringify(offs)}`);
    }
    const bytes = (shape as number[]).reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype as SafeDtype];
    if (offs[1] - offs[0] !== bytes) {
      throw bad(`tensor "${name}" (${dtype} [${shape}]) needs ${bytes} bytes but its data_offsets span ${offs[1] - offs[0]}`);
    }
    if (dataStart + offs[1] > size) {
      throw new ConvertError(file, `tensor "${name}" ends at byte ${dataStart + offs[1]} but the file has ${size} bytes (truncated download?)`);
    }
    tensors.set(name, { name, file, dtype: dtype as SafeDtype, shape: shape as number[], offset: dataStart + offs[0], bytes });
  }
  const byOffset = [...tensors.values()].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const [a, b] = [byOffset[i - 1], byOffset[i]];
    if (b.offset < a.offset + a.bytes) throw bad(`the data of tensors "${a.name}" and "${b.name}" overlap (their data_offsets lie)`);
  }
  return { tensors, unsupported };
}

function shardNames(index: string, dir: string): string[] {
  let json: { weight_map?: Record<string, unknown> };
  try {
    json = JSON.parse(fs.readFileSync(index, 'utf8'));
  } catch (err) {
    throw new ConvertError(index, `is not valid JSON (${(err as Error).message})`);
  }
  const map = json?.weight_map;
  if (!map || typeof map !== 'object') throw new ConvertError(index, 'has no "weight_map"');
  const names = new Set<string>();
  for (const v of Object.values(map)) {
    if (typeof v !== 'string' || path.isAbsolute(v) || v !== path.basename(v) || !v.endsWith('.safetensors')) {
      throw new ConvertError(index, `names a shard ${JSON.stringify(v)}: shards must be .safetensors files in the same folder`);
    }
    names.add(v);
  }
  for (const n of names) if (!fs.existsSync(path.join(dir, n))) throw new ConvertError(path.join(dir, n), 'is listed in the index but missing');
  return [...names].sort();
}

let f16Table: Float32Array | null = null;

/** float16 bits -> float32, by table (256 KB, built once). */
export function halfTable(): Float32Array {
  f16Table ??= Float32Array.from({ length: 65536 }, (_, h) => halfToFloat(h));
  return f16Table;
}

function toFloat32(raw: Uint8Array, dtype: SafeDtype, n: number): Float32Array {
  if (dtype === 'F32') return new Float32Array(raw.buffer, raw.byteOffset, n);
  const src = new Uint16Array(raw.buffer, raw.byteOffset, n);
  if (dtype === 'BF16') {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = src[i] << 16;
    return new Float32Array(out.buffer);
  }
  const table = halfTable();
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = table[src[i]];
  return out;
}
