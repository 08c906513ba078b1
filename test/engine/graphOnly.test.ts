// readGraphOnly (graphOnly.ts): an ONNX file's model without its inline weights, which become references to
// where the same bytes are in the file. Checked against the whole file decoded, and on files that are cut short
// or are not protobuf.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { onnx } from 'onnx-proto';
import { readGraphOnly } from '../../src/engine/model/graphOnly';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { ROOT, TINY } from '../helpers';

/** Decoded messages carry every field (protobufjs); the I-types leave them optional. */
const graphOf = (m: onnx.ModelProto) => m.graph as onnx.GraphProto;
const external = (t: onnx.ITensorProto) => Object.fromEntries((t.externalData ?? []).map((e) => [e.key, e.value]));

describe('readGraphOnly', () => {
  test('inline weights become references to their own bytes in the file; small ones and the rest stay', () => {
    const file = readModelFolder(TINY).onnxPath;
    const bytes = fs.readFileSync(file);
    const model = onnx.ModelProto.decode(bytes);
    const slimModel = readGraphOnly(file);
    assert.ok(onnx.ModelProto.encode(slimModel).finish().length < bytes.length / 4, 'the graph alone is a fraction of the file');
    const [whole, slim] = [graphOf(model), graphOf(slimModel)];
    assert.deepEqual(slim.node, whole.node);
    assert.deepEqual(slim.input, whole.input);
    assert.deepEqual(slimModel.opsetImport, model.opsetImport);
    let referenced = 0;
    for (const [i, t] of (whole.initializer as onnx.TensorProto[]).entries()) {
      const s = slim.initializer[i] as onnx.TensorProto;
      assert.equal(s.name, t.name);
      assert.deepEqual(s.dims, t.dims);
      if (t.rawData.length < 1024) {
        assert.deepEqual(s.rawData, t.rawData, `${t.name} stays inline`);
        continue;
      }
      referenced++;
      assert.equal(s.dataLocation, onnx.TensorProto.DataLocation.EXTERNAL);
      assert.equal(s.rawData.length, 0);
      const ref = external(s);
      assert.equal(ref.location, path.basename(file));
      const at = Number(ref.offset);
      assert.ok(Buffer.from(t.rawData).equals(bytes.subarray(at, at + Number(ref.length))), `${t.name}: the reference points at its bytes`);
    }
    assert.ok(referenced > 0);
  });

  test('weights already in external data files keep their references', () => {
    const file = readModelFolder(path.join(ROOT, 'test', 'fixtures', 'families', 'qwen2.5-coder')).onnxPath;
    const whole = onnx.ModelProto.decode(fs.readFileSync(file));
    assert.deepEqual(graphOf(readGraphOnly(file)).initializer, graphOf(whole).initializer);
  });

  test('a tensor that already names external data keeps its bytes; a graph over 64 MB without weights is refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-graph-only-'));
    const raw = new Uint8Array(4096).fill(7);
    const odd = { name: 'odd', dataType: 1, dims: [1024], rawData: raw, externalData: [{ key: 'location', value: 'elsewhere.bin' }] };
    const file = path.join(dir, 'odd.onnx');
    fs.writeFileSync(file, onnx.ModelProto.encode({ irVersion: 8, graph: { name: 'g', initializer: [odd] } }).finish());
    const t = graphOf(readGraphOnly(file)).initializer[0] as onnx.TensorProto;
    assert.deepEqual(Buffer.from(t.rawData), Buffer.from(raw));
    assert.deepEqual(external(t), { location: 'elsewhere.bin' });
    // 65 MB of constants in a node attribute (not an initializer): not a graph to edit in memory.
    const big = path.join(dir, 'big.onnx');
    const value = { name: 'c', dataType: 2, dims: [65 * 1024 * 1024], rawData: new Uint8Array(65 * 1024 * 1024) };
    const node = { opType: 'Constant', output: ['c'], attribute: [{ name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: value }] };
    fs.writeFileSync(big, onnx.ModelProto.encode({ irVersion: 8, graph: { name: 'g', node: [node] } }).finish());
    assert.throws(() => readGraphOnly(big), /its graph is over 64 MB without its weights/);
  });

  test('a file cut short, or not protobuf, throws', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-graph-only-'));
    const bytes = fs.readFileSync(readModelFolder(TINY).onnxPath);
    const cut = path.join(dir, 'cut.onnx');
    fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    assert.throws(() => readGraphOnly(cut), /runs past its message|the file ends at byte/);
    const group = path.join(dir, 'group.onnx');
    fs.writeFileSync(group, Uint8Array.from([(7 << 3) | 3, 0]));
    assert.throws(() => readGraphOnly(group), /unsupported protobuf wire type 3/);
    const endless = path.join(dir, 'endless.onnx');
    fs.writeFileSync(endless, Buffer.alloc(32, 0xff));
    assert.throws(() => readGraphOnly(endless), /does not end|runs past|unsupported/);
  });
});
