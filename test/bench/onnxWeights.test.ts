import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { onnxWeightBytesPerToken } from '../../bench/onnxWeights';
import { convertCheckpoint } from '../../src/converter/convert';
import { ROOT, TINY, TINY_FUSED } from '../helpers';

test('weight bytes per token: every initializer but the indexed tables, read from the protobuf', () => {
  const cfg = JSON.parse(fs.readFileSync(path.join(TINY, 'config.json'), 'utf8'));
  const embedding = cfg.vocab_size * cfg.hidden_size * 4;
  // torch.onnx's graph: the embedding table is only gathered (the LM head has its own transposed copy). The
  // converter's lean graph: the tied table is also the LM head's Gemm weight (read whole), and RotaryEmbedding
  // reads one row of its cos/sin caches per position.
  const rotary = 2 * cfg.max_position_embeddings * (cfg.head_dim / 2) * 4;
  for (const [dir, gathered] of [
    [TINY, embedding],
    [TINY_FUSED, rotary],
  ] as const) {
    const file = path.join(dir, 'onnx', 'model.onnx');
    const w = onnxWeightBytesPerToken(file);
    assert.equal(w.gathered, gathered, dir);
    assert.equal(w.unused, 0, dir);
    assert.equal(w.perToken, w.total - w.gathered);
    // The weights are nearly the whole file and its external data (the rest is graph structure and names).
    const size = [file, `${file}_data`].filter((f) => fs.existsSync(f)).reduce((n, f) => n + fs.statSync(f).size, 0);
    assert.ok(w.total <= size && w.total > 0.8 * size, `${w.total} of ${size} bytes`);
  }
});

test('weight bytes per token: external data, MatMulNBits and a tied GatherBlockQuantized table counted once, as read', async () => {
  const from = path.join(ROOT, 'test', 'fixtures', 'checkpoints', 'qwen2');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-weights-')), 'q4');
  try {
    const r = await convertCheckpoint({ from, out, quant: 'q4' });
    const cfg = JSON.parse(fs.readFileSync(path.join(from, 'config.json'), 'utf8'));
    const headDim = cfg.hidden_size / cfg.num_attention_heads;
    const w = onnxWeightBytesPerToken(r.onnxFile);
    // Only the rotary caches are indexed: the embedding's codes and scales are also the tied LM head's.
    assert.equal(w.gathered, 2 * cfg.max_position_embeddings * (headDim / 2) * 4);
    const lmHead = cfg.vocab_size * (cfg.hidden_size / 2 + (cfg.hidden_size / 32) * 4);
    assert.ok(w.perToken > lmHead, `${w.perToken} bytes per token include the ${lmHead}-byte LM head`);
    // Counted by declared length without reading the data file, the shared table once: at most the data file
    // (which adds alignment padding).
    const data = fs.statSync(`${r.onnxFile}_data`).size;
    assert.ok(w.total <= data && w.total > 0.9 * data, `${w.total} of ${data} bytes`);
  } finally {
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
});
