import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';

export const ROOT = packageRoot(__dirname);
export const TINY = path.join(ROOT, 'test', 'fixtures', 'tiny-llama');
/**
 * tiny-llama's weights in the lean graph of `ghostline convert --quant fp32` (src/converter, the default model's
 * exporter), from a float32 checkpoint folder (tools/model/make_fixtures.py).
 */
export const TINY_FUSED = path.join(path.dirname(TINY), 'tiny-llama-fused');
/** The worker as tsc compiles it next to the client (tests run the compiled sources, not the bundle). */
export const WORKER = path.join(ROOT, 'out', 'src', 'engine', 'worker', 'worker.js');

export interface Reference {
  prompt: string;
  prompt_ids: number[];
  greedy_tokens: number[];
  vocab: number;
  rows: Float32Array[];
}

/** reference.json plus its logits rows; `Extra` types the fields a fixture adds. */
export function loadReference<Extra extends object = object>(dir = TINY): Reference & Extra {
  const ref = JSON.parse(fs.readFileSync(path.join(dir, 'reference.json'), 'utf8'));
  const buf = fs.readFileSync(path.join(dir, 'reference_logits.bin'));
  const all = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const vocab: number = ref.logits_layout.cols;
  const rows: Float32Array[] = [];
  for (let i = 0; i * vocab < all.length; i++) rows.push(all.subarray(i * vocab, (i + 1) * vocab));
  return { ...ref, vocab, rows };
}

/** A copy of a model folder in a temp dir, for tests that break it. */
export function copyModel(dir = TINY): string {
  const dst = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-model-'));
  fs.cpSync(dir, dst, { recursive: true });
  return dst;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}
