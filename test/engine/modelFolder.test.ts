import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { TINY, copyModel } from '../helpers';

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

test('a model file that is a FIFO or /dev/zero is refused unread (a read would block or fill memory)', async () => {
  const fifo = await loadError((d) => {
    fs.rmSync(path.join(d, 'config.json'));
    execFileSync('mkfifo', [path.join(d, 'config.json')]);
  });
  assert.match(fifo.message, /config\.json: is not a regular file/);
  const zero = await loadError((d) => {
    fs.rmSync(path.join(d, 'tokenizer.json'));
    fs.symlinkSync('/dev/zero', path.join(d, 'tokenizer.json'));
  });
  assert.match(zero.message, /tokenizer\.json: is not a regular file/);
  const graph = await loadError((d) => {
    const onnx = fs.readdirSync(path.join(d, 'onnx')).find((f) => f.endsWith('.onnx'))!;
    fs.rmSync(path.join(d, 'onnx', onnx));
    execFileSync('mkfifo', [path.join(d, 'onnx', onnx)]);
  });
  assert.match(graph.message, /\.onnx: is not a regular file/);
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

const DEFAULT_MODEL = defaultModelDir();
const editConfig = (d: string, patch: Record<string, unknown>) => {
  const p = path.join(d, 'config.json');
  fs.writeFileSync(p, JSON.stringify({ ...JSON.parse(fs.readFileSync(p, 'utf8')), ...patch }));
};

test("a tokenizer far smaller than the model's logits (another model's tokenizer) is named", async () => {
  // The default model (4,096 logit columns) with tiny-llama's 384-token tokenizer.
  const dir = copyModel(DEFAULT_MODEL);
  try {
    fs.copyFileSync(path.join(TINY, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
    await assert.rejects(
      Engine.load(dir, { threads: 1 }),
      /tokenizer\.json: the tokenizer has 384 tokens but the model's logits have 4096 columns: they belong to different models/,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a vocab_size in config.json that disagrees with the logits is named', async () => {
  const dir = copyModel(DEFAULT_MODEL);
  try {
    editConfig(dir, { vocab_size: 5000 });
    await assert.rejects(Engine.load(dir, { threads: 1 }), /config\.json: vocab_size is 5000 but the ONNX graph's logits have 4096 columns/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a max_position_embeddings beyond the graph's rotary tables is named at load, not at the first long prompt", async () => {
  const dir = copyModel(DEFAULT_MODEL);
  try {
    editConfig(dir, { max_position_embeddings: 4096 });
    await assert.rejects(
      Engine.load(dir, { threads: 1 }),
      /config\.json: max_position_embeddings \(4096\) is larger than the 512 positions the ONNX graph's rotary tables hold/,
    );
    // Within the graph's limit it loads, and the context follows config.json.
    editConfig(dir, { max_position_embeddings: 256 });
    const engine = await Engine.load(dir, { threads: 1 });
    assert.equal(engine.info.contextLength, 256);
    await engine.dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('ghostline.modelFile must name a file inside the model folder: no absolute path, no ..', async () => {
  const dir = copyModel();
  const outside = path.join(path.dirname(dir), `outside-${path.basename(dir)}.onnx`);
  fs.copyFileSync(path.join(dir, 'onnx', fs.readdirSync(path.join(dir, 'onnx')).find((f) => f.endsWith('.onnx'))!), outside);
  try {
    for (const onnxFile of [outside, `../${path.basename(outside)}`, `onnx/../../${path.basename(outside)}`, '..\\x.onnx']) {
      await assert.rejects(Engine.load(dir, { threads: 1, onnxFile }), /the ONNX file must be a name inside the model folder/, onnxFile);
    }
    // A plain name, or one under onnx/, still works.
    const name = fs.readdirSync(path.join(dir, 'onnx')).find((f) => f.endsWith('.onnx'))!;
    for (const onnxFile of [name, `onnx/${name}`]) {
      const engine = await Engine.load(dir, { threads: 1, onnxFile });
      await engine.dispose();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { force: true });
  }
});
