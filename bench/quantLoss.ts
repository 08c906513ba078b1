// The quantization loss measurement behind `npm run eval:quant-loss` (quantLossMain.ts) and eval:gguf-quant-loss.
// What 8-bit and 4-bit weights cost in loss: the checkpoint (model.safetensors) converted by `ghostline convert`
// to fp32, int8 and q4 (accuracy level 4, as shipped, and 0; blocks of 32, 64 and 128), then the mean negative log-likelihood per token of
// the default model's held-out files (tools/model/eval/heldout.jsonl: files never trained on), in windows of
// the model's context, through the engine's own forward pass.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { convertCheckpoint } from '../src/converter/convert';
import type { Quant } from '../src/converter/types';
import { packageRoot } from '../src/engine/host/defaultModel';
import { OnnxCausalLM } from '../src/engine/model/onnxModel';
import { TextTokenizer } from '../src/engine/model/tokenizer';
import { round } from './stats';

interface Variant {
  name: string;
  quant: Quant;
  accuracyLevel: number;
  /** 4-bit block size (the converter's --block-size); 32 when absent, as llama.cpp's Q4_0. */
  blockSize?: number;
  /** The embedding's and output head's bits with q4 (the converter's --head-bits). */
  headBits?: 4 | 8;
}

const VARIANTS: Variant[] = [
  { name: 'fp32', quant: 'fp32', accuracyLevel: 0 },
  { name: 'int8', quant: 'int8', accuracyLevel: 4 },
  { name: 'q4', quant: 'q4', accuracyLevel: 4 },
  { name: 'q4_accuracy0', quant: 'q4', accuracyLevel: 0 },
  // Larger blocks: fewer scales to read (decode 13% / 21% faster on the Qwen2.5-Coder-0.5B shape), more error.
  { name: 'q4_block64', quant: 'q4', accuracyLevel: 4, blockSize: 64 },
  { name: 'q4_block128', quant: 'q4', accuracyLevel: 4, blockSize: 128 },
  // The head at 8 bits, as llama.cpp's 4-bit files keep their output tensor at 6 bits.
  { name: 'q4_head8', quant: 'q4', accuracyLevel: 4, headBits: 8 },
];

export interface QuantLossResult {
  model: string;
  tokens: number;
  window: number;
  nll: Record<string, number>;
  delta_vs_fp32: Record<string, number>;
  bytes: Record<string, number>;
}

/** The default model's held-out files (never trained on) as token windows of the model's context. */
export function heldOutWindows(modelDir: string): { windows: number[][]; window: number } {
  const root = packageRoot(__dirname);
  const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
  const tokenizer = new TextTokenizer(
    JSON.parse(fs.readFileSync(path.join(modelDir, 'tokenizer.json'), 'utf8')),
    JSON.parse(fs.readFileSync(path.join(modelDir, 'tokenizer_config.json'), 'utf8')),
  );
  const rows = fs
    .readFileSync(path.join(root, 'tools', 'model', 'eval', 'heldout.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { prefix: string; expected: string; suffix: string });
  const window = Math.min(512, config.max_position_embeddings ?? 512);
  const windows: number[][] = [];
  for (const r of rows) {
    const ids = tokenizer.encode(r.prefix + r.expected + r.suffix);
    for (let at = 0; at + 1 < ids.length; at += window) windows.push(ids.slice(at, at + window));
  }
  return { windows, window };
}

/** Mean negative log-likelihood per token of a converted graph over `windows`, and the tokens scored. */
export async function meanNll(onnxFile: string, config: Record<string, unknown>, windows: number[][]): Promise<{ nll: number; tokens: number }> {
  const model = await OnnxCausalLM.load(onnxFile, config, { threads: 2 });
  let sum = 0;
  let count = 0;
  try {
    for (const ids of windows) {
      const r = await model.forward([ids], model.emptyCache(), ids.length);
      const vocab = r.logits.length / r.rows;
      for (let i = 0; i + 1 < ids.length; i++) {
        sum += nll(r.logits.subarray(i * vocab, (i + 1) * vocab), ids[i + 1]);
        count++;
      }
    }
  } finally {
    await model.release();
  }
  return { nll: sum / count, tokens: count };
}

export async function quantLoss(modelDir: string): Promise<QuantLossResult> {
  const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
  const { windows, window } = heldOutWindows(modelDir);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-quant-loss-'));
  const result: QuantLossResult = { model: path.basename(modelDir), tokens: 0, window, nll: {}, delta_vs_fp32: {}, bytes: {} };
  try {
    for (const v of VARIANTS) {
      const conv = await convertCheckpoint({
        from: modelDir,
        out: path.join(work, v.name),
        quant: v.quant,
        accuracyLevel: v.accuracyLevel,
        blockSize: v.blockSize,
        headBits: v.headBits,
      });
      const scored = await meanNll(conv.onnxFile, config, windows);
      result.nll[v.name] = round(scored.nll, 5);
      result.bytes[v.name] = conv.bytes;
      result.tokens = scored.tokens;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const v of VARIANTS) result.delta_vs_fp32[v.name] = round(result.nll[v.name] - result.nll.fp32, 5);
  return result;
}

function nll(row: Float32Array, target: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > max) max = row[i];
  let z = 0;
  for (let i = 0; i < row.length; i++) z += Math.exp(row[i] - max);
  return Math.log(z) + max - row[target];
}
