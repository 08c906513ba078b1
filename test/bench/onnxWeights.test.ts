import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { onnxWeightBytesPerToken } from '../../bench/onnxWeights';
import { TINY, TINY_FUSED } from '../helpers';

test('weight bytes per token: every initializer but the gathered embedding table, read from the protobuf', () => {
  const cfg = JSON.parse(fs.readFileSync(path.join(TINY, 'config.json'), 'utf8'));
  const embedding = cfg.vocab_size * cfg.hidden_size * 4;
  for (const dir of [TINY, TINY_FUSED]) {
    const file = path.join(dir, 'onnx', 'model.onnx');
    const w = onnxWeightBytesPerToken(file);
    assert.equal(w.gathered, embedding, dir);
    assert.equal(w.perToken, w.total - w.gathered);
    // The weights are nearly the whole file (the rest is graph structure and names).
    const size = fs.statSync(file).size;
    assert.ok(w.total <= size && w.total > 0.8 * size, `${w.total} of ${size} bytes`);
  }
});
