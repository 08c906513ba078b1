import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine';
import { copyModel } from '../helpers';

async function loadError(mutate: (dir: string) => void): Promise<Error> {
  const dir = copyModel();
  try {
    mutate(dir);
    await Engine.load(dir, { threads: 1 });
  } catch (err) {
    return err as Error;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.fail('the model loaded');
}

test('a missing folder is named', async () => {
  await assert.rejects(Engine.load('/nonexistent/model'), /\/nonexistent\/model: model folder not found/);
});

test('a missing config.json is named', async () => {
  const err = await loadError((d) => fs.rmSync(path.join(d, 'config.json')));
  assert.match(err.message, /config\.json: missing/);
});

test('a corrupt tokenizer.json is named', async () => {
  const err = await loadError((d) => fs.writeFileSync(path.join(d, 'tokenizer.json'), '{"model": '));
  assert.match(err.message, /tokenizer\.json: is not valid JSON/);
});

test('a folder without an ONNX file says so', async () => {
  const err = await loadError((d) => fs.rmSync(path.join(d, 'onnx'), { recursive: true }));
  assert.match(err.message, /no \.onnx model file/);
});

test('a corrupt ONNX file is named', async () => {
  const err = await loadError((d) => fs.writeFileSync(path.join(d, 'onnx', 'model.onnx'), Buffer.from('this is not a protobuf at all')));
  assert.match(err.message, /model\.onnx: onnxruntime could not load it/);
});

test('a config that disagrees with the graph on layers is named', async () => {
  const err = await loadError((d) => {
    const p = path.join(d, 'config.json');
    fs.writeFileSync(p, JSON.stringify({ ...JSON.parse(fs.readFileSync(p, 'utf8')), num_hidden_layers: 7 }));
  });
  assert.match(err.message, /model\.onnx: has 2 layers of KV cache but config\.json says num_hidden_layers = 7/);
});

test('a tokenizer larger than the logits is named', async () => {
  const err = await loadError((d) => {
    const p = path.join(d, 'tokenizer.json');
    const tok = JSON.parse(fs.readFileSync(p, 'utf8'));
    tok.added_tokens.push({ id: 5000, content: '<extra>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    fs.writeFileSync(p, JSON.stringify(tok));
  });
  assert.match(err.message, /tokenizer\.json: the tokenizer has 5001 tokens but the model's logits have only \d+ columns/);
});
