import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';

/** Inline weights at least this large are left in the file and referenced; smaller ones are copied. */
const MIN_REFERENCED_BYTES = 1024;
/** What is read of the file besides referenced weights: more than this is not a graph worth editing. */
const MAX_GRAPH_BYTES = 64 * 1024 * 1024;
/** Bytes read per file access while walking the fields. */
const WINDOW = 1 << 20;

const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const TENSOR_RAW_DATA = 9;
const TENSOR_EXTERNAL_DATA = 13;
const LENGTH_DELIMITED = 2;

/**
 * The model in an ONNX file without its inline weights: each initializer's `raw_data` of 1 KB or more becomes
 * a reference to where those bytes already are in the same file (ONNX external data: location, offset,
 * length), so a graph can be edited and loaded from memory (with onnxruntime told the file's folder) without
 * reading or copying its weights. Exports of 0.5B-1.5B models carry 0.2-1.6 GB inline; their graph alone is a
 * few MB. Weights already in external data files stay as they are.
 *
 * Throws on a file that is not a protobuf message or whose graph (weights aside) exceeds 64 MB.
 */
export function readGraphOnly(file: string): onnx.ModelProto {
  const fd = fs.openSync(file, 'r');
  try {
    const bytes = new FileBytes(fd, fs.fstatSync(fd).size);
    const out = new Pieces();
    let graph = new Pieces();
    const within = (more: number) => {
      if (out.length + graph.length + more > MAX_GRAPH_BYTES) throw new Error('its graph is over 64 MB without its weights');
    };
    // Counted before a field is copied, so a graph of inline constants is refused without reading them.
    const copy = (to: Pieces, f: Field) => {
      within(f.end - f.tagStart);
      to.raw(bytes.read(f.tagStart, f.end));
    };
    for (const f of fieldsOf(bytes, 0, bytes.size)) {
      if (f.field !== MODEL_GRAPH || f.wire !== LENGTH_DELIMITED) {
        copy(out, f);
        continue;
      }
      graph = new Pieces();
      for (const g of fieldsOf(bytes, f.start, f.end)) {
        if (g.field !== GRAPH_INITIALIZER || g.wire !== LENGTH_DELIMITED) copy(graph, g);
        else {
          graph.field(g.field, tensorWithoutWeights(bytes, g, path.basename(file)));
          within(0);
        }
      }
      out.field(f.field, graph.join());
      graph = new Pieces();
    }
    return onnx.ModelProto.decode(out.join());
  } finally {
    fs.closeSync(fd);
  }
}

/** A TensorProto's bytes, its `raw_data` (when large) replaced by a reference to the same bytes in `location`. */
function tensorWithoutWeights(bytes: FileBytes, tensor: Field, location: string): Uint8Array {
  const fields = [...fieldsOf(bytes, tensor.start, tensor.end)];
  // A tensor that already names external data is left as it is: two references would leave the runtime to pick.
  const referenced = fields.some((t) => t.field === TENSOR_EXTERNAL_DATA);
  const weights = referenced
    ? undefined
    : fields.find((t) => t.field === TENSOR_RAW_DATA && t.wire === LENGTH_DELIMITED && t.end - t.start >= MIN_REFERENCED_BYTES);
  const out = new Pieces();
  for (const t of fields) if (t !== weights) out.raw(bytes.read(t.tagStart, t.end));
  if (weights) {
    // Appended fields merge into the message (protobuf), the last data_location winning.
    out.raw(
      onnx.TensorProto.encode({
        externalData: [
          { key: 'location', value: location },
          { key: 'offset', value: String(weights.start) },
          { key: 'length', value: String(weights.end - weights.start) },
        ],
        dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
      }).finish(),
    );
  }
  return out.join();
}

interface Field {
  field: number;
  wire: number;
  /** Where the field's tag starts. */
  tagStart: number;
  /** The payload: bytes of a length-delimited field, the value's bytes otherwise. */
  start: number;
  end: number;
}

/** The fields of the message in [start, end), read from the file a window at a time. */
function* fieldsOf(bytes: FileBytes, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const tagStart = pos;
    const [tag, afterTag] = bytes.varint(pos);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    let payload = afterTag;
    let payloadEnd: number;
    if (wire === 0) payloadEnd = bytes.varint(afterTag)[1];
    else if (wire === 1) payloadEnd = afterTag + 8;
    else if (wire === 5) payloadEnd = afterTag + 4;
    else if (wire === LENGTH_DELIMITED) {
      const [length, afterLength] = bytes.varint(afterTag);
      payload = afterLength;
      payloadEnd = afterLength + length;
    } else throw new Error(`unsupported protobuf wire type ${wire} at byte ${tagStart}`);
    if (field === 0 || payloadEnd > end) throw new Error(`a field at byte ${tagStart} runs past its message`);
    yield { field, wire, tagStart, start: payload, end: payloadEnd };
    pos = payloadEnd;
  }
}

/** Random access to a file's bytes through a window, so walking fields does not read what it skips. */
class FileBytes {
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  read(start: number, end: number): Buffer {
    if (end > this.size) throw new Error(`the file ends at byte ${this.size}, inside a field`);
    if (start < this.windowStart || end > this.windowStart + this.window.length) {
      const length = Math.min(Math.max(end - start, WINDOW), this.size - start);
      const b = Buffer.alloc(length);
      fs.readSync(this.fd, b, 0, length, start);
      [this.window, this.windowStart] = [b, start];
    }
    return this.window.subarray(start - this.windowStart, end - this.windowStart);
  }

  /** A varint (up to 2^53) at `pos`, and where the next byte is. */
  varint(pos: number): [number, number] {
    const b = this.read(pos, Math.min(pos + 10, this.size));
    let value = 0;
    for (let i = 0; i < b.length; i++) {
      value += (b[i] & 0x7f) * 2 ** (7 * i);
      if (b[i] < 0x80) return [value, pos + i + 1];
    }
    throw new Error(`a varint at byte ${pos} does not end`);
  }
}

/** Encoded protobuf bytes, assembled from copied fields and new length-delimited ones. */
class Pieces {
  private readonly parts: Uint8Array[] = [];
  length = 0;

  raw(b: Uint8Array): void {
    // Copied: a window's bytes are reused by the next read.
    this.parts.push(Uint8Array.from(b));
    this.length += b.length;
  }

  field(field: number, payload: Uint8Array): void {
    this.raw(Uint8Array.from([...varint(field * 8 + LENGTH_DELIMITED), ...varint(payload.length)]));
    this.parts.push(payload);
    this.length += payload.length;
  }

  join(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
