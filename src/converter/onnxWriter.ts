import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { ConvertError } from './errors';

/** ONNX element types used here (onnx.TensorProto.DataType). */
export const DT = { float: 1, uint8: 2, int32: 6, int64: 7, bool: 9 } as const;
export type ElemType = (typeof DT)[keyof typeof DT];

type Attr = number | number[] | string | Float32Array;
type Dim = number | string;

/** Weights start at page boundaries so onnxruntime can map them rather than copy. */
const ALIGN = 4096;

/**
 * Builds an ONNX graph whose weights stream into one external data file as they are produced (the graph
 * itself stays a few hundred KB, far from protobuf's 2 GB limit); small constants stay inline.
 */
export class OnnxWriter {
  private readonly nodes: onnx.INodeProto[] = [];
  private readonly initializers: onnx.ITensorProto[] = [];
  private readonly inputs: onnx.IValueInfoProto[] = [];
  private readonly outputs: onnx.IValueInfoProto[] = [];
  private readonly fd: number;
  private offset = 0;
  private count = 0;

  constructor(
    readonly onnxPath: string,
    private readonly dataName = `${path.basename(onnxPath)}_data`,
  ) {
    this.fd = fs.openSync(path.join(path.dirname(onnxPath), dataName), 'w');
  }

  get dataBytes(): number {
    return this.offset;
  }

  input(name: string, type: ElemType, dims: Dim[]): string {
    this.inputs.push(valueInfo(name, type, dims));
    return name;
  }

  output(name: string, type: ElemType, dims: Dim[]): string {
    this.outputs.push(valueInfo(name, type, dims));
    return name;
  }

  /** A weight written to the external data file now. */
  weight(name: string, type: ElemType, dims: number[], data: ArrayBufferView): string {
    const at = this.append(data);
    return this.externalRef(name, type, dims, at, data.byteLength);
  }

  /** A second initializer over bytes already written (tied embeddings: the same codes gathered and multiplied). */
  externalRef(name: string, type: ElemType, dims: number[], offset: number, length: number): string {
    this.initializers.push({
      name,
      dataType: type,
      dims,
      dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
      externalData: [
        { key: 'location', value: this.dataName },
        { key: 'offset', value: String(offset) },
        { key: 'length', value: String(length) },
      ],
    });
    return name;
  }

  /** Appends bytes (aligned) and returns their offset. */
  append(data: ArrayBufferView): number {
    const at = this.alignedStart();
    this.appendRaw(data);
    return at;
  }

  /** Pads to the next aligned offset and returns it: a weight written in pieces with appendRaw starts here. */
  alignedStart(): number {
    const pad = (ALIGN - (this.offset % ALIGN)) % ALIGN;
    if (pad) this.write(new Uint8Array(pad));
    return this.offset;
  }

  appendRaw(data: ArrayBufferView): void {
    this.write(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  }

  /** A small constant kept inside the graph. */
  constant(name: string, type: ElemType, dims: number[], values: number[] | Float32Array): string {
    const raw =
      type === DT.int64
        ? new BigInt64Array(Array.from(values, (v) => BigInt(v)))
        : type === DT.float
          ? Float32Array.from(values)
          : type === DT.int32
            ? Int32Array.from(values)
            : Uint8Array.from(values);
    this.initializers.push({ name, dataType: type, dims, rawData: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) });
    return name;
  }

  node(op: string, inputs: string[], outputs: string[] | number = 1, attrs: Record<string, Attr> = {}, domain = ''): string[] {
    const id = this.count++;
    const outs = typeof outputs === 'number' ? Array.from({ length: outputs }, (_, i) => `${op}_${id}_${i}`) : outputs;
    this.nodes.push({
      name: `${op}_${id}`,
      opType: op,
      domain,
      input: inputs,
      output: outs,
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return outs;
  }

  /** One-output node. */
  op(op: string, inputs: string[], attrs: Record<string, Attr> = {}, domain = '', out?: string): string {
    return this.node(op, inputs, out ? [out] : 1, attrs, domain)[0];
  }

  /** Writes the graph file and closes the data file. */
  finish(graphName: string, producer: string): void {
    fs.closeSync(this.fd);
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: producer,
      opsetImport: [
        { domain: '', version: 17 },
        { domain: 'com.microsoft', version: 1 },
      ],
      graph: { name: graphName, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    });
    writeAll(this.onnxPath, onnx.ModelProto.encode(model).finish());
  }

  /** Closes the data file without writing a graph (on error or cancel). */
  abort(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
  }

  private write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) {
      try {
        done += fs.writeSync(this.fd, bytes, done, bytes.length - done);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'ENOSPC' ? 'the disk is full' : (err as Error).message;
        throw new ConvertError(path.join(path.dirname(this.onnxPath), this.dataName), `cannot be written: ${why}`);
      }
    }
    this.offset += bytes.length;
  }
}

/** writeFileSync with the file named in the error (a failed write on the fd names none). */
export function writeAll(file: string, bytes: Uint8Array): void {
  try {
    fs.writeFileSync(file, bytes);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConvertError(file, `cannot be written: ${code === 'ENOSPC' ? 'the disk is full' : (err as Error).message}`);
  }
}

function valueInfo(name: string, elemType: ElemType, dims: Dim[]): onnx.IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

function attribute(name: string, v: Attr): onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'string') return { name, type: T.STRING, s: new TextEncoder().encode(v) };
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v };
  if (v instanceof Float32Array) return { name, type: T.FLOATS, floats: Array.from(v) };
  return Number.isInteger(v) && !Object.is(v, -0) && !floatAttrs.has(name) ? { name, type: T.INT, i: v } : { name, type: T.FLOAT, f: v };
}

/** Attributes that are floats even when their value is a whole number. */
const floatAttrs = new Set(['epsilon', 'alpha', 'beta', 'scale']);
