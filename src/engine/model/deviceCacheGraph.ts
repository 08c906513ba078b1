import { onnx } from 'onnx-proto';
import type { DeviceCacheVariant } from './deviceCacheVariant';
import { LEAN_GRAPH_NAME, leanNames } from './leanContract';

/**
 * The lean graph made to keep its KV cache on the GPU (leanContract.ts, "device cache"). For each layer it
 * also outputs the cache with this run's rows written in (`cache_out.{i}.key` / `.value`): the same tensor as
 * the input with `seq` positions replaced, at the positions `position_ids` gives. The runtime leaves those
 * outputs on the GPU and feeds them back as the next run's cache, so a decode step uploads a token instead of
 * the whole cache. `new_kv` stays, read back as before, so the host keeps its own copy (moved runs, forks, kept
 * caches and a fallback to the CPU all read it).
 *
 * Made at load from the graph file the converter wrote (the weights stay in their data file), not by the
 * converter: every lean graph converted so far, the shipped one included, gets it, and the CPU never runs
 * the extra nodes (onnxruntime runs every node of a graph, fetched or not: a full copy of the cache per step).
 *
 * Returns the variant, or why this graph cannot have one (then the cache is uploaded on every run).
 */
export function deviceCacheGraph(model: onnx.ModelProto): DeviceCacheVariant | { why: string } {
  if (!model.graph || model.graph.name !== LEAN_GRAPH_NAME) return { why: 'not a Ghostline lean graph' };
  // Decoded messages carry every repeated field as an array (protobufjs), which the I-types leave optional.
  const g = model.graph as onnx.GraphProto;
  const layers = countLayers(g);
  if (layers === 0) return { why: 'the graph has no cache inputs' };
  // new_kv is the Concat of each layer's new keys (after rotary) and values, [batch, seq, kvHeads * headDim]
  // each, in layer order (leanGraph.ts): the rows to write, before they are stacked.
  const concat = g.node.find((n) => n.output?.includes(leanNames.newKv));
  const rows = concat?.input ?? [];
  if (concat?.opType !== 'Concat' || rows.length !== 2 * layers) return { why: `"${leanNames.newKv}" is not one Concat of ${2 * layers} rows` };
  const dims = fixedDims(g, leanNames.cacheKey(0));
  if (!dims) return { why: `"${leanNames.cacheKey(0)}" declares no fixed KV head count or head size` };
  const [kvHeads, headDim] = dims;
  if (g.output.some((o) => o.name?.startsWith('cache_out.'))) return { why: 'the graph already has device cache outputs' };

  const nodes: onnx.INodeProto[] = [];
  const inits: onnx.ITensorProto[] = [];
  let serial = 0;
  const op = (opType: string, input: string[], attribute: onnx.IAttributeProto[] = [], output = `device_cache/${opType}_${serial++}`) => {
    nodes.push({ opType, input, output: [output], name: output, attribute });
    return output;
  };
  const ints = (name: string, values: number[]) => {
    const full = `device_cache/${name}`;
    inits.push({ name: full, dataType: onnx.TensorProto.DataType.INT64, dims: [values.length], int64Data: values });
    return full;
  };
  const perm = (p: number[]): onnx.IAttributeProto[] => [{ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: p }];
  const axis = (a: number): onnx.IAttributeProto[] => [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: a }];

  const split = ints('rows_4d', [0, 0, kvHeads, headDim]);
  // Positions as scatter indices, shaped like the rows they place: keys [b, kvh, D, s], values [b, kvh, s, D].
  // In int32: WebGPU has no int64 Reshape or Expand, so int64 indices were built on the CPU and uploaded whole
  // (placement went from 11 CPU nodes to 8; only the Cast of the [b, s] positions stays there).
  const pos32 = op('Cast', [leanNames.positionIds], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: onnx.TensorProto.DataType.INT32 }]);
  const keyPos = op('Reshape', [pos32, ints('key_pos_shape', [0, 1, 1, -1])]);
  const valuePos = op('Reshape', [pos32, ints('value_pos_shape', [0, 1, -1, 1])]);
  let keyIndex = '';
  let valueIndex = '';
  const outputs: onnx.IValueInfoProto[] = [];
  const kept: DeviceCacheVariant['kept'] = [];
  for (let i = 0; i < layers; i++) {
    const keys = op('Transpose', [op('Reshape', [rows[2 * i], split])], perm([0, 2, 3, 1]));
    const values = op('Transpose', [op('Reshape', [rows[2 * i + 1], split])], perm([0, 2, 1, 3]));
    keyIndex ||= op('Expand', [keyPos, op('Shape', [keys])]);
    valueIndex ||= op('Expand', [valuePos, op('Shape', [values])]);
    op('ScatterElements', [leanNames.cacheKey(i), keyIndex, keys], axis(3), leanNames.cacheOutKey(i));
    op('ScatterElements', [leanNames.cacheValue(i), valueIndex, values], axis(2), leanNames.cacheOutValue(i));
    outputs.push(
      cacheInfo(leanNames.cacheOutKey(i), ['batch', kvHeads, headDim, 'cap']),
      cacheInfo(leanNames.cacheOutValue(i), ['batch', kvHeads, 'cap', headDim]),
    );
    kept.push({ output: leanNames.cacheOutKey(i), input: leanNames.cacheKey(i) }, { output: leanNames.cacheOutValue(i), input: leanNames.cacheValue(i) });
  }
  g.node.push(...nodes);
  g.initializer.push(...inits);
  g.output.push(...outputs);
  return { bytes: onnx.ModelProto.encode(model).finish(), kept };
}

function countLayers(g: onnx.GraphProto): number {
  const inputs = new Set(g.input.map((i) => i.name));
  let layers = 0;
  while (inputs.has(leanNames.cacheKey(layers))) layers++;
  return layers;
}

/** The fixed [kvHeads, headDim] of a cache input declared [batch, kvHeads, headDim, cap]. */
function fixedDims(g: onnx.GraphProto, name: string): [number, number] | null {
  const dim = g.input.find((i) => i.name === name)?.type?.tensorType?.shape?.dim;
  const value = (d: onnx.TensorShapeProto.IDimension | undefined) => (d?.dimValue != null ? Number(d.dimValue) : NaN);
  const kvHeads = value(dim?.[1]);
  const headDim = value(dim?.[2]);
  return kvHeads > 0 && headDim > 0 ? [kvHeads, headDim] : null;
}

function cacheInfo(name: string, dims: (number | string)[]): onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}
