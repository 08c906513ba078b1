import * as fs from 'node:fs';

/**
 * Bytes of weights a decode step reads: every initializer of the main graph except the tables that only a
 * Gather indexes (the embedding and its row scales: one row per token). Read straight from the ONNX
 * protobuf (ModelProto.graph -> GraphProto.node / initializer) with a minimal wire-format walker, so
 * external data files count by their declared shapes without being read.
 */
export interface OnnxWeightBytes {
  total: number;
  gathered: number;
  perToken: number;
}

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

export function onnxWeightBytesPerToken(file: string): OnnxWeightBytes {
  const buf = fs.readFileSync(file);
  const sizes = new Map<string, number>();
  const gatherTables = new Set<string>();
  // A tied embedding also feeds the LM head's MatMul: then every byte of it is read per token.
  const otherUses = new Set<string>();
  for (const m of fields(buf, 0, buf.length)) {
    if (m.no !== 7 || m.wire !== 2) continue; // ModelProto.graph
    for (const g of fields(buf, m.start, m.end)) {
      if (g.wire !== 2) continue;
      if (g.no === 5) {
        // TensorProto: dims = 1, data_type = 2, name = 8
        let dims: number[] = [];
        let type = 0;
        let name = '';
        for (const t of fields(buf, g.start, g.end)) {
          if (t.no === 1) dims = t.wire === 2 ? dims.concat(packedVarints(buf, t)) : dims.concat([t.value]);
          else if (t.no === 2) type = t.value;
          else if (t.no === 8) name = buf.toString('utf8', t.start, t.end);
        }
        sizes.set(name, dims.reduce((a, b) => a * b, 1) * (ELEMENT_BYTES[type] ?? 4));
      } else if (g.no === 1) {
        // NodeProto: input = 1, op_type = 4
        const inputs: string[] = [];
        let op = '';
        for (const n of fields(buf, g.start, g.end)) {
          if (n.no === 1) inputs.push(buf.toString('utf8', n.start, n.end));
          else if (n.no === 4) op = buf.toString('utf8', n.start, n.end);
        }
        if (op === 'Gather' && inputs.length > 0) gatherTables.add(inputs[0]);
        for (const name of op === 'Gather' ? inputs.slice(1) : inputs) otherUses.add(name);
      }
    }
  }
  let total = 0;
  let gathered = 0;
  for (const [name, bytes] of sizes) {
    total += bytes;
    if (gatherTables.has(name) && !otherUses.has(name)) gathered += bytes;
  }
  return { total, gathered, perToken: total - gathered };
}
