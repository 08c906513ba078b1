import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers';

export const CHECKPOINTS = path.join(ROOT, 'test', 'fixtures', 'checkpoints');
export const CASES = ['qwen2', 'llama', 'llama-untied', 'starcoder2'] as const;

/** reference.json of a checkpoint fixture (tools/model/make_checkpoint_fixtures.py, PyTorch float32). */
export interface CheckpointReference {
  prompt: string;
  prompt_ids: number[];
  greedy_ids: number[];
  prefill_last_logits: number[];
  logits_by_step: number[][];
  long_prompt_ids: number[];
  long_greedy_ids: number[];
  long_prefill_last_logits: number[];
  min_margin: number;
}

export function checkpointReference(name: string): CheckpointReference {
  return JSON.parse(fs.readFileSync(path.join(CHECKPOINTS, name, 'reference.json'), 'utf8'));
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ghostline-${prefix}-`));
}

export interface TensorSpec {
  dtype: 'F32' | 'F16' | 'BF16' | 'I64';
  shape: number[];
  data: Uint8Array;
}

/** Writes a safetensors file (tests: rewritten and broken checkpoints). */
export function writeSafetensors(file: string, tensors: Record<string, TensorSpec>, headerPatch?: (h: Record<string, unknown>) => void): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  headerPatch?.(header);
  let json = Buffer.from(JSON.stringify(header));
  const pad = (8 - (json.length % 8)) % 8;
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([len, json, ...Object.values(tensors).map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))]));
}

export function f32Bytes(a: Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A copy of a checkpoint fixture without its weights (config, tokenizer files). */
export function copyCheckpointMeta(name: string, dst: string): void {
  for (const f of fs.readdirSync(path.join(CHECKPOINTS, name))) {
    if (f.endsWith('.json') && !f.startsWith('model.safetensors') && f !== 'reference.json')
      fs.copyFileSync(path.join(CHECKPOINTS, name, f), path.join(dst, f));
  }
}
