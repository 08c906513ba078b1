// gpuKernels.ts: the matrix products a GPU session would still run on the CPU, read from the graph. The gpu
// tier (gpuKernels.gpu.test.ts) checks the list against onnxruntime's WebGPU provider itself.
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { onnx } from 'onnx-proto';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { readGraphOnly } from '../../src/engine/model/graphOnly';
import { productsOnCpu } from '../../src/engine/model/gpuKernels';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { describeDevice } from '../../src/engine/shared/device';
import { ROOT } from '../helpers';
import { int8ProductExport } from './int8Export';

describe('productsOnCpu', () => {
  test('graphs whose products all have WebGPU kernels: none (the shipped q4/int8 MatMulNBits graph, a float export)', () => {
    assert.equal(productsOnCpu(readGraphOnly(readModelFolder(defaultModelDir(ROOT)).onnxPath)), null);
    assert.equal(productsOnCpu(readGraphOnly(readModelFolder(`${ROOT}/test/fixtures/tiny-llama`).onnxPath)), null);
  });

  test('int8 products, at the top and inside a branch, are named with what to pick instead', () => {
    const branch: onnx.IGraphProto = { name: 'then', node: [{ opType: 'DynamicQuantizeMatMul', domain: 'com.microsoft' }] };
    const model: onnx.IModelProto = {
      graph: {
        node: [{ opType: 'MatMulInteger' }, { opType: 'If', attribute: [{ name: 'then_branch', type: onnx.AttributeProto.AttributeType.GRAPH, g: branch }] }],
      },
    };
    assert.equal(
      productsOnCpu(model),
      "its int8 matrix products (DynamicQuantizeMatMul, MatMulInteger) have no WebGPU kernel and run on the CPU; the model's q4 or float16 file, or a converted checkpoint, runs them on the GPU",
    );
  });

  test('a loaded export with an int8 product says so, and the device line carries it on the GPU only', async () => {
    const folder = readModelFolder(int8ProductExport());
    const model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1, deviceCache: true });
    assert.match(model.gpuCpuProducts ?? '', /^its int8 matrix products \(MatMulInteger\) have no WebGPU kernel/);
    const r = await model.forward([[1, 2, 3]], model.emptyCache());
    assert.ok(r.logits.every(Number.isFinite), 'the edited export runs');
    await model.release();
    const plain = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
    assert.equal(plain.gpuCpuProducts, null, 'the CPU does not read the graph for it');
    await plain.release();
    const line = describeDevice({ setting: 'gpu', device: 'gpu', gpuApi: 'Vulkan', gpuWarning: 'w', reason: 'the device is set to gpu' });
    assert.equal(line, 'GPU (WebGPU on Vulkan): the device is set to gpu; w');
    assert.equal(describeDevice({ setting: 'auto', device: 'cpu', gpuWarning: 'w', reason: 'r' }), 'CPU: r');
  });
});
