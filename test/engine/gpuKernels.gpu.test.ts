// The list of matrix products without a WebGPU kernel (model/gpuKernels.ts), checked against onnxruntime's
// WebGPU provider itself on SwiftShader: each listed op, alone in a graph, is placed on the CPU, and the
// products Ghostline's graphs use (MatMul, MatMulNBits) on the GPU. Placement is read from onnxruntime's
// verbose log in a child process. Then the warning reaches the device line of a GPU session.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { onnx } from 'onnx-proto';
import { PRODUCTS_WITHOUT_WEBGPU_KERNEL } from '../../src/engine/model/gpuKernels';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { describeDevice } from '../../src/engine/shared/device';
import { chooseDevice } from '../../src/engine/worker/deviceChoice';
import { ROOT } from '../helpers';
import { useSwiftShader } from '../swiftShader';
import { int8ProductExport } from './int8Export';

const skip = useSwiftShader();
const T = onnx.TensorProto.DataType;
const N = 64;

const filled = (name: string, dataType: number, dims: number[], bytesPer = 1): onnx.ITensorProto => ({
  name,
  dataType,
  dims,
  rawData: new Uint8Array(dims.reduce((a, b) => a * b, 1) * bytesPer).fill(1),
});
const info = (name: string, elemType: number, dims: number[]): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => ({ dimValue: d })) } } },
});
const ints = (name: string, i: number): onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.INT, i });

/** One node with its inputs: [op, node inputs, initializers, the graph input's type, the output's type, attributes]. */
const GRAPHS: Record<string, { domain?: string; inputs: string[]; init: onnx.ITensorProto[]; x: number; y: number; attribute?: onnx.IAttributeProto[] }> = {
  MatMulInteger: {
    inputs: ['x', 'w', 'xz', 'wz'],
    init: [filled('w', T.INT8, [N, N]), filled('xz', T.UINT8, []), filled('wz', T.INT8, [])],
    x: T.UINT8,
    y: T.INT32,
  },
  DynamicQuantizeMatMul: {
    domain: 'com.microsoft',
    inputs: ['x', 'w', 'ws', 'wz'],
    init: [filled('w', T.INT8, [N, N]), filled('ws', T.FLOAT, [], 4), filled('wz', T.INT8, [])],
    x: T.FLOAT,
    y: T.FLOAT,
  },
  MatMulIntegerToFloat: {
    domain: 'com.microsoft',
    inputs: ['x', 'w', 'xs', 'ws', 'xz', 'wz'],
    init: [filled('w', T.INT8, [N, N]), filled('xs', T.FLOAT, [], 4), filled('ws', T.FLOAT, [], 4), filled('xz', T.UINT8, []), filled('wz', T.INT8, [])],
    x: T.UINT8,
    y: T.FLOAT,
  },
  QLinearMatMul: {
    inputs: ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'],
    init: [
      filled('xs', T.FLOAT, [], 4),
      filled('xz', T.UINT8, []),
      filled('w', T.UINT8, [N, N]),
      filled('ws', T.FLOAT, [], 4),
      filled('wz', T.UINT8, []),
      filled('ys', T.FLOAT, [], 4),
      filled('yz', T.UINT8, []),
    ],
    x: T.UINT8,
    y: T.UINT8,
  },
  MatMul: { inputs: ['x', 'w'], init: [filled('w', T.FLOAT, [N, N], 4)], x: T.FLOAT, y: T.FLOAT },
  MatMulNBits: {
    domain: 'com.microsoft',
    inputs: ['x', 'w', 'ws'],
    init: [filled('w', T.UINT8, [N, N / 32, 16]), filled('ws', T.FLOAT, [N * (N / 32)], 4)],
    x: T.FLOAT,
    y: T.FLOAT,
    attribute: [ints('K', N), ints('N', N), ints('bits', 4), ints('block_size', 32)],
  },
};

/** Where onnxruntime's WebGPU session puts the graph's one node: the provider's name from its verbose log. */
function placement(op: string): string {
  const g = GRAPHS[op];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-kernel-'));
  const file = path.join(dir, `${op}.onnx`);
  const model: onnx.IModelProto = {
    irVersion: 8,
    opsetImport: [
      { domain: '', version: 17 },
      { domain: 'com.microsoft', version: 1 },
    ],
    graph: {
      name: op,
      node: [{ opType: op, domain: g.domain ?? '', input: g.inputs, output: ['y'], attribute: g.attribute ?? [] }],
      initializer: g.init,
      input: [info('x', g.x, [1, N])],
      output: [info('y', g.y, [1, N])],
    },
  };
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
  const script = `require('onnxruntime-node').InferenceSession.create(${JSON.stringify(file)}, { executionProviders: ['webgpu'], logSeverityLevel: 0, logVerbosityLevel: 0 }).then((s) => s.release())`;
  // onnxruntime writes its log to stderr.
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: path.join(__dirname, '..', '..') });
  assert.equal(run.status, 0, `${op}: ${run.stderr.slice(-500)}`);
  const log = run.stderr;
  const placed = /All nodes placed on \[(\w+)\]/.exec(log) ?? /Node\(s\) placed on \[(\w+)\]/.exec(log);
  return placed?.[1] ?? `not found in the log (${log.length} characters)`;
}

describe('WebGPU kernels on SwiftShader', { skip }, () => {
  test('every listed int8 product is placed on the CPU; MatMul and MatMulNBits on the GPU', () => {
    for (const op of PRODUCTS_WITHOUT_WEBGPU_KERNEL) assert.equal(placement(op), 'CPUExecutionProvider', op);
    for (const op of ['MatMul', 'MatMulNBits']) assert.equal(placement(op), 'WebGpuExecutionProvider', op);
  });

  test('a GPU session of an export with an int8 product says so on its device line', async () => {
    const folder = readModelFolder(int8ProductExport());
    const choice = await chooseDevice(folder.onnxPath, folder.config, { device: 'gpu', contextLength: 128 });
    assert.equal(choice.report.device, 'gpu');
    assert.match(
      describeDevice(choice.report),
      /: the device is set to gpu; its int8 matrix products \(MatMulInteger\) have no WebGPU kernel and run on the CPU; /,
    );
    await choice.model.release();
  });

  test('a GPU that fails while auto measures it (float16 on a device without shader-f16) is remembered until forgotten', async () => {
    // SwiftShader has no shader-f16: the float16 export's first GPU run fails, every time.
    const folder = readModelFolder(path.join(ROOT, 'test', 'fixtures', 'families', 'starcoder2'));
    const verdicts = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-verdicts-')), 'device-verdicts.json');
    const choose = () => chooseDevice(folder.onnxPath, folder.config, { device: 'auto', contextLength: 128, deviceVerdictFile: verdicts });
    const first = await choose();
    assert.equal(first.report.device, 'cpu');
    assert.match(first.report.reason, /^the GPU failed while measured: .*f16/);
    const stored = Object.values(JSON.parse(fs.readFileSync(verdicts, 'utf8')).verdicts) as { gpuFailed?: string }[];
    assert.equal(stored.length, 1);
    assert.match(stored[0].gpuFailed ?? '', /f16/);
    await first.model.release();
    const second = await choose();
    assert.equal(second.report.device, 'cpu');
    assert.match(
      second.report.reason,
      /^the GPU failed on this model when measured on \d{4}-\d\d-\d\d \(.*f16.*\); it is measured again from .*Measure Devices Again$/,
    );
    await second.model.release();
    // Measure Devices Again deletes the file: measured (and failing) again.
    fs.rmSync(verdicts);
    const third = await choose();
    assert.match(third.report.reason, /^the GPU failed while measured: /);
    await third.model.release();
  });
});
