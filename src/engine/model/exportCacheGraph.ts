import { onnx } from 'onnx-proto';
import type { DeviceCacheVariant } from './deviceCacheVariant';

/** The output with the rows a run added to `present` (the only part of the cache read back to the host). */
export const presentRows = (present: string) => `${present}.rows`;

/**
 * A Hugging Face / Optimum export made to keep its KV cache on the GPU (the lean graph's counterpart is
 * deviceCacheGraph.ts). Its `present.*` outputs are the whole cache after the run; they stay on the GPU and go
 * back in as the next run's `past_key_values.*`. Two additions make that work:
 *
 * - Each past input is cut to the length the attention mask gives (its length minus the new tokens) before
 *   anything reads it. A keystroke crops the cache on the host; the GPU's copy is then longer than the cache
 *   and is fed as it is, cut in the graph, instead of going up again.
 * - Each present output also comes out cut to the run's new positions (`present.{i}.key.rows`), which is all
 *   the host reads back to keep its own copy (kvCache.ts appends them), instead of the whole cache every run.
 *
 * Renaming is done on the readers of each past input, at every depth (the merged decoder's If branches read
 * them from the outer graph), so the inputs and outputs keep their names and the contract its meaning.
 */
export function exportCacheGraph(model: onnx.ModelProto): DeviceCacheVariant | { why: string } {
  const g = model.graph as onnx.GraphProto | null;
  if (!g) return { why: 'the file has no graph' };
  const inputs = new Set(g.input.map((i) => i.name));
  const outputs = new Map(g.output.map((o) => [o.name, o]));
  let layers = 0;
  while (inputs.has(past(layers, 'key'))) layers++;
  if (layers === 0 || !inputs.has('input_ids') || !inputs.has('attention_mask')) return { why: 'not a decoder export with past_key_values inputs' };
  const opset = model.opsetImport.find((o) => !o.domain || o.domain === 'ai.onnx')?.version;
  if (opset == null || Number(opset) < 10) return { why: `opset ${opset ?? 'unknown'} is older than 10` };
  const pairs: { output: string; input: string }[] = [];
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value'] as const) {
      const [input, output] = [past(i, kind), `present.${i}.${kind}`];
      if (!inputs.has(input) || !outputs.has(output)) return { why: `it has no "${input}" input or "${output}" output` };
      if (outputs.has(input) || outputs.has(presentRows(output))) return { why: `"${input}" or "${presentRows(output)}" is already an output` };
      pairs.push({ output, input });
    }
  }

  const nodes: onnx.INodeProto[] = [];
  const inits: onnx.ITensorProto[] = [];
  const op = (opType: string, input: string[], output: string) => {
    nodes.push({ opType, input, output: [output], name: output });
    return output;
  };
  const ints = (name: string, values: number[]) => {
    inits.push({ name: `device_cache/${name}`, dataType: onnx.TensorProto.DataType.INT64, dims: [values.length], int64Data: values });
    return `device_cache/${name}`;
  };
  // Positions already cached = the mask's length - the new tokens (every export takes a mask over both).
  const second = ints('second', [1]);
  const total = op('Gather', [op('Shape', ['attention_mask'], 'device_cache/mask_shape'), second], 'device_cache/total');
  const fed = op('Gather', [op('Shape', ['input_ids'], 'device_cache/ids_shape'), second], 'device_cache/fed');
  const cached = op('Sub', [total, fed], 'device_cache/cached');
  const [zero, axis, end] = [ints('zero', [0]), ints('positions_axis', [2]), ints('end', [Number.MAX_SAFE_INTEGER])];
  const cut = new Map<string, string>();
  for (const { input } of pairs) cut.set(input, op('Slice', [input, zero, cached, axis], `device_cache/${input}`));
  const reads = nodes.splice(0);
  for (const { output } of pairs) op('Slice', [output, cached, end, axis], presentRows(output));

  renameReaders(g, cut);
  if (!inputs.has(KEEP)) cutLogits(g, op, ints, end);
  g.node.unshift(...reads);
  g.node.push(...nodes);
  g.initializer.push(...inits);
  for (const { output } of pairs) g.output.push(rowsInfo(outputs.get(output) as onnx.ValueInfoProto));
  return { bytes: onnx.ModelProto.encode(model).finish(), kept: pairs };
}

const past = (layer: number, kind: 'key' | 'value') => `past_key_values.${layer}.${kind}`;
const KEEP = 'num_logits_to_keep';

/**
 * For an export without `num_logits_to_keep` (Optimum's merged decoders): that input, and the logits cut to the
 * last N positions (0: all), as newer exports do. Otherwise every prefill chunk's logits would come back from
 * the GPU (128 rows of the vocabulary) when the engine reads the last one. The head still runs on every row.
 */
function cutLogits(
  g: onnx.GraphProto,
  op: (opType: string, input: string[], output: string) => string,
  ints: (name: string, values: number[]) => string,
  end: string,
): void {
  const producer = g.node.find((n) => n.output?.includes('logits'));
  if (!producer) return;
  const all = 'device_cache/all_logits';
  producer.output = (producer.output ?? []).map((o) => (o === 'logits' ? all : o));
  renameReaders(g, new Map([['logits', all]]));
  const from = op('Neg', [op('Reshape', [KEEP, ints('one', [1])], 'device_cache/keep')], 'device_cache/keep_from');
  op('Slice', [all, from, end, ints('rows_axis', [1])], 'logits');
  g.input.push({ name: KEEP, type: { tensorType: { elemType: onnx.TensorProto.DataType.INT64, shape: { dim: [] } } } });
}

/** Points every reader of a renamed value at its new name, in subgraphs too (unless a subgraph names its own). */
function renameReaders(g: onnx.IGraphProto, names: Map<string, string>): void {
  for (const n of g.node ?? []) {
    n.input = (n.input ?? []).map((name) => names.get(name) ?? name);
    for (const a of n.attribute ?? []) for (const sub of [...(a.g ? [a.g] : []), ...(a.graphs ?? [])]) renameReaders(sub, outerOnly(sub, names));
  }
}

/** The renames a subgraph sees: those of outer values it does not shadow with an input, initializer or node output. */
function outerOnly(g: onnx.IGraphProto, names: Map<string, string>): Map<string, string> {
  const own = new Set([...(g.input ?? []).map((i) => i.name), ...(g.initializer ?? []).map((i) => i.name)]);
  for (const n of g.node ?? []) for (const o of n.output ?? []) own.add(o);
  return new Map([...names].filter(([from]) => !own.has(from)));
}

/** The present output's type with the positions axis made symbolic: a run's rows, not the whole cache. */
function rowsInfo(present: onnx.ValueInfoProto): onnx.IValueInfoProto {
  const dims = present.type?.tensorType?.shape?.dim ?? [];
  return {
    name: presentRows(present.name),
    type: {
      tensorType: {
        elemType: present.type?.tensorType?.elemType,
        shape: { dim: dims.map((d, i) => (i === 2 ? { dimParam: 'fed_positions' } : d)) },
      },
    },
  };
}
