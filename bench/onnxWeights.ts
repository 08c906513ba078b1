import * as fs from 'node:fs';

/**
 * Bytes of weights a decode step reads: every initializer of the main graph except the tables that are only
 * indexed (a row per token or position): the data, scales and zero points of Gather / GatherBlockQuantized
 * (the embedding) and RotaryEmbedding's cos/sin caches. Initializers stored in external data count by their
 * declared length, without reading the data file; two initializers that name the same bytes of the same data
 * file (Ghostline's tied embedding: GatherBlockQuantized's table and the LM head's MatMulNBits weight) count
 * once, as read per token when any of their uses reads the whole table. Read straight from the ONNX protobuf
 * (ModelProto.graph -> GraphProto.node / initializer) with a minimal wire-format walker.
 */
export interface OnnxWeightBytes {
  total: number;
  gathered: number;
  perToken: number;
  /** Initializers no node uses (left out of perToken). */
  unused?: number;
}

/** Inputs of these operators that are tables indexed per token or position (not read whole). */
const INDEXED_INPUTS: Record<string, number[]> = { Gather: [0], GatherBlockQuantized: [0, 2, 3], RotaryEmbedding: [2, 3] };

// TensorProto.DataType -> bytes per element (4-bit types: half a byte).
const ELEMENT_BYTES: Record<number, number> = { 1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2, 21: 0.5, 22: 0.5 };

interface Field {
  no: number;
  wire: number;
  value: number;
  start: number;
  end: number;
}

/** Reads a base-128 varint at `pos`: [value, position after it] (lengths can exceed 2^31: no bit ops). */
function varint(buf: Buffer, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++];
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
}

function* fields(buf: Buffer, start: number, end: number): Generator<Field> {
  let p = start;
  while (p < end) {
    const [key, afterKey] = varint(buf, p);
    p = afterKey;
    const no = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      const [value, next] = varint(buf, p);
      p = next;
      yield { no, wire, value, start: p, end: p };
    } else if (wire === 2) {
      const [len, next] = varint(buf, p);
      p = next + len;
      yield { no, wire, value: len, start: next, end: p };
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      yield { no, wire, value: 0, start: p, end: p + size };
      p += size;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

function packedVarints(buf: Buffer, f: Field): number[] {
  const out: number[] = [];
  for (let p = f.start; p < f.end; ) {
    const [v, next] = varint(buf, p);
    out.push(v);
    p = next;
  }
  return out;
}

interface Initializer {
  bytes: number;
  /** Where its bytes live: the name for inline data, file:offset:length for external data. */
  storage: string;
}

export function onnxWeightBytesPerToken(file: string): OnnxWeightBytes {
  const buf = fs.readFileSync(file);
  const inits = new Map<string, Initializer>();
  const indexed = new Set<string>();
  const readWhole = new Set<string>();
  for (const m of fields(buf, 0, buf.length)) {
    if (m.no !== 7 || m.wire !== 2) continue; // ModelProto.graph
    for (const g of fields(buf, m.start, m.end)) {
      if (g.wire !== 2) continue;
      if (g.no === 5) {
        // TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9, external_data = 13, data_location = 14
        let dims: number[] = [];
        let type = 0;
        let name = '';
        const ext: Record<string, string> = {};
        for (const t of fields(buf, g.start, g.end)) {
          if (t.no === 1) dims = t.wire === 2 ? dims.concat(packedVarints(buf, t)) : dims.concat([t.value]);
          else if (t.no === 2) type = t.value;
          else if (t.no === 8) name = buf.toString('utf8', t.start, t.end);
          else if (t.no === 13 && t.wire === 2) {
            // StringStringEntryProto: key = 1, value = 2
            let key = '';
            let value = '';
            for (const e of fields(buf, t.start, t.end)) {
              if (e.no === 1) key = buf.toString('utf8', e.start, e.end);
              else if (e.no === 2) value = buf.toString('utf8', e.start, e.end);
            }
            ext[key] = value;
          }
        }
        const declared = Math.ceil(dims.reduce((a, b) => a * b, 1) * (ELEMENT_BYTES[type] ?? 4));
        if (ext.location !== undefined) {
          const bytes = ext.length !== undefined ? Number(ext.length) : declared;
          inits.set(name, { bytes, storage: `${ext.location}:${ext.offset ?? 0}:${bytes}` });
        } else inits.set(name, { bytes: declared, storage: `inline:${name}` });
      } else if (g.no === 1) {
        // NodeProto: input = 1, op_type = 4
        const inputs: string[] = [];
        let op = '';
        for (const n of fields(buf, g.start, g.end)) {
          if (n.no === 1) inputs.push(buf.toString('utf8', n.start, n.end));
          else if (n.no === 4) op = buf.toString('utf8', n.start, n.end);
        }
        const tables = INDEXED_INPUTS[op] ?? [];
        for (const [i, name] of inputs.entries()) (tables.includes(i) ? indexed : readWhole).add(name);
      }
    }
  }
  // Per storage region: read whole per token if any initializer on it is; else indexed; else unused.
  const regions = new Map<string, { bytes: number; whole: boolean; indexed: boolean }>();
  for (const [name, init] of inits) {
    const r = regions.get(init.storage) ?? { bytes: init.bytes, whole: false, indexed: false };
    r.whole ||= readWhole.has(name);
    r.indexed ||= indexed.has(name);
    regions.set(init.storage, r);
  }
  let total = 0;
  let gathered = 0;
  let unused = 0;
  for (const r of regions.values()) {
    total += r.bytes;
    if (!r.whole && r.indexed) gathered += r.bytes;
    else if (!r.whole) unused += r.bytes;
  }
  return { total, gathered, perToken: total - gathered - unused, unused };
}
