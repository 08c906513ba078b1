import type { onnx } from 'onnx-proto';
import { errorMessage } from '../shared/errors';
import { deviceCacheGraph } from './deviceCacheGraph';
import { exportCacheGraph } from './exportCacheGraph';
import { readGraphOnly } from './graphOnly';
import { LEAN_GRAPH_NAME } from './leanContract';

/** A graph that keeps its KV cache on the device: its bytes, and which outputs go back in as which inputs. */
export interface DeviceCacheVariant {
  bytes: Uint8Array;
  kept: { output: string; input: string }[];
}

/** An ONNX file's graph without its weights (graphOnly.ts), or why it could not be read. */
export function readGraph(file: string): onnx.ModelProto | { why: string } {
  try {
    return readGraphOnly(file);
  } catch (err) {
    return { why: `the graph file could not be read (${errorMessage(err)})` };
  }
}

/**
 * The variant of a graph (readGraph) that keeps the KV cache on the device between runs: for a lean graph
 * deviceCacheGraph.ts, for a Hugging Face export exportCacheGraph.ts; the weights stay in their files. Or why
 * there is none (then the cache goes up on every run, as before). The graph is edited in place.
 */
export function deviceCacheVariant(model: onnx.ModelProto | { why: string }): DeviceCacheVariant | { why: string } {
  if ('why' in model) return model;
  try {
    return model.graph?.name === LEAN_GRAPH_NAME ? deviceCacheGraph(model) : exportCacheGraph(model);
  } catch (err) {
    // A graph that decodes but cannot be edited or encoded again (nesting too deep for the stack, say).
    return { why: `the graph could not be made to keep the cache (${errorMessage(err)})` };
  }
}
