import * as fs from 'node:fs';
import { onnx } from 'onnx-proto';

/** Graph files larger than this hold their weights inline: parsing them only for a shape is not worth it. */
const MAX_PARSED_BYTES = 16 * 1024 * 1024;

/**
 * Positions the graph's rotary tables hold (the rows of the cos cache that onnxruntime's RotaryEmbedding or
 * GroupQueryAttention reads), or null when the graph has none or is too large to parse cheaply. A prompt
 * past that position fails inside onnxruntime, so the context must not exceed it.
 */
export function rotaryPositions(onnxPath: string): number | null {
  let bytes: Buffer;
  try {
    if (fs.statSync(onnxPath).size > MAX_PARSED_BYTES) return null;
    bytes = fs.readFileSync(onnxPath);
  } catch {
    return null;
  }
  let graph: onnx.IGraphProto | null | undefined;
  try {
    graph = onnx.ModelProto.decode(bytes).graph;
  } catch {
    return null; // onnxruntime will name what is wrong with the file
  }
  if (!graph) return null;
  const dims = new Map<string, number>();
  for (const t of graph.initializer ?? []) if (t.name && t.dims?.length === 2) dims.set(t.name, Number(t.dims[0]));
  let limit: number | null = null;
  for (const node of graph.node ?? []) {
    const at = node.opType === 'RotaryEmbedding' ? 2 : node.opType === 'GroupQueryAttention' ? 7 : -1;
    const rows = at >= 0 ? dims.get(node.input?.[at] ?? '') : undefined;
    if (rows !== undefined) limit = limit === null ? rows : Math.min(limit, rows);
  }
  return limit;
}
