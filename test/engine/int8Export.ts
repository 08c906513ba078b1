// A copy of the tiny torch.onnx export whose first projection is an int8 product as Optimum's dynamic
// quantization writes it (DynamicQuantizeLinear, MatMulInteger, Cast, Mul): a decoder that loads and runs, with
// one product that onnxruntime's WebGPU provider has no kernel for (model/gpuKernels.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { readGraphOnly } from '../../src/engine/model/graphOnly';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { TINY, copyModel } from '../helpers';

export function int8ProductExport(): string {
  const dir = copyModel(TINY);
  const file = readModelFolder(dir).onnxPath;
  // The edited graph refers to the original weights, kept beside it as its external data file.
  const weights = `${path.basename(file)}_data`;
  const model = readGraphOnly(file);
  fs.renameSync(file, path.join(path.dirname(file), weights));
  const g = model.graph as onnx.GraphProto;
  for (const t of g.initializer) for (const e of t.externalData ?? []) if (e.key === 'location') e.value = weights;
  const at = g.node.findIndex((n) => n.opType === 'MatMul' && g.initializer.some((t) => t.name === n.input?.[1]));
  const matmul = g.node[at] as onnx.NodeProto;
  const dims = (g.initializer.find((t) => t.name === matmul.input[1]) as onnx.TensorProto).dims.map(Number);
  const [x, y] = [matmul.input[0], matmul.output[0]];
  g.initializer.push({ name: 'int8/w', dataType: onnx.TensorProto.DataType.INT8, dims, rawData: new Uint8Array(dims[0] * dims[1]).fill(1) });
  g.node.splice(
    at,
    1,
    { opType: 'DynamicQuantizeLinear', input: [x], output: ['int8/q', 'int8/s', 'int8/z'], name: 'int8/quantize' },
    { opType: 'MatMulInteger', input: ['int8/q', 'int8/w', 'int8/z'], output: ['int8/y'], name: 'int8/matmul' },
    {
      opType: 'Cast',
      input: ['int8/y'],
      output: ['int8/yf'],
      name: 'int8/cast',
      attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
    },
    { opType: 'Mul', input: ['int8/yf', 'int8/s'], output: [y], name: 'int8/scale' },
  );
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return dir;
}
