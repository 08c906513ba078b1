import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { GgufCheckpoint, ggufRow } from '../../src/converter/gguf/ggufCheckpoint';
import { readGgufHeader } from '../../src/converter/gguf/ggufFile';
import { tokenizerFromGguf } from '../../src/converter/gguf/ggufTokenizer';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { Engine } from '../../src/engine/worker/engine';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { maxAbsDiff, ROOT } from '../helpers';
import { CHECKPOINTS, checkpointReference, tempDir } from './checkpointFixtures';

// GGUF files written by tools/model/export_gguf.py from the checkpoint fixtures (the writer whose files
// llama-server runs in the server tests): F32 for exactness, Q8_0 and Q4_0 for the block formats. See
// test/fixtures/gguf/README.md.
const GGUF = path.join(ROOT, 'test', 'fixtures', 'gguf');
const FIXTURES = [
  { file: 'qwen2-f32.gguf', checkpoint: 'qwen2' }, // qwen2 pre-tokenizer, q/k/v biases, tied embeddings
  { file: 'llama-f32.gguf', checkpoint: 'llama' }, // llama.cpp's permuted q/k rows, SmolLM's digit splitting
  { file: 'llama-untied-f32.gguf', checkpoint: 'llama-untied' }, // an lm_head, DeepSeek-Coder's splits and BOS
  { file: 'starcoder2-f32.gguf', checkpoint: 'starcoder2' }, // LayerNorm with biases, c_fc/c_proj, StarCoder's digits
] as const;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function outDir(tag: string): string {
  const d = tempDir(`gguf-${tag}`);
  dirs.push(d);
  return path.join(d, 'model');
}

/** Code, numbers, unicode, whitespace runs, CRLF and special-token strings: where pre-tokenizers differ. */
const TEXTS = [
  'def fibonacci(n: int) -> int:\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n',
  'const total = items.reduce((s, x) => s + x.price * 1.0825, 0); // 12345 apples\r\n',
  "it's they're we'VE I'LL    trailing   \n\n\n\tindent\u00a0nbsp",
  'café déjà vu — 東京 서울 日本語のテキスト ٣٤٥ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 emoji 🙂👍🏽',
  '<|endoftext|><|fim_prefix|>x<|fim_suffix|>y<|fim_middle|><|file_sep|>a.py\n<｜begin▁of▁sentence｜>',
  '2024-01-01T00:00:00Z 0x1F 1_000_000 3.14159e-10 ............ !!!??? ``` ~~~',
];

for (const { file, checkpoint } of FIXTURES) {
  describe(`GGUF ${file}`, () => {
    const ref = checkpointReference(checkpoint);

    test('the tokenizer rebuilt from its metadata encodes and decodes as the original tokenizer.json', () => {
      const h = readGgufHeader(path.join(GGUF, file));
      const rebuilt = tokenizerFromGguf(h);
      const read = (f: string) => JSON.parse(fs.readFileSync(path.join(CHECKPOINTS, checkpoint, f), 'utf8'));
      const original = new TextTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
      const mine = new TextTokenizer(rebuilt.tokenizerJson, rebuilt.tokenizerConfig);
      for (const text of TEXTS) {
        const ids = original.encode(text);
        assert.deepEqual(mine.encode(text), ids, JSON.stringify(text));
        assert.deepEqual(mine.encodeLiteral(text), original.encodeLiteral(text), JSON.stringify(text));
        assert.equal(mine.decode(ids), original.decode(ids));
      }
      assert.deepEqual([...mine.specialTokens].sort(), [...original.specialTokens].sort());
    });

    test('converted (--quant fp32) it is the model converted from the checkpoint: the same ids, tokens and log-probabilities', async () => {
      const fromGguf = outDir(checkpoint);
      const fromCheckpoint = outDir(`${checkpoint}-st`);
      const r = await convertCheckpoint({ from: path.join(GGUF, file), out: fromGguf, quant: 'fp32' });
      await convertCheckpoint({ from: path.join(CHECKPOINTS, checkpoint), out: fromCheckpoint, quant: 'fp32' });
      const config = JSON.parse(fs.readFileSync(path.join(fromGguf, 'config.json'), 'utf8'));
      assert.equal(config.ghostline.converted.from, file);
      assert.equal(r.modelType, checkpoint.startsWith('llama') ? 'llama' : checkpoint);
      const opts = { maxNewTokens: ref.greedy_ids.length, temperature: 0, ignoreEos: true, tokenHealing: false, speculativeTokens: 0 };
      const run = async (dir: string) => {
        const engine = await Engine.load(dir, { threads: 1 });
        try {
          return { ids: engine.tokenize(ref.prompt), g: await engine.generate(ref.prompt, opts) };
        } finally {
          await engine.dispose();
        }
      };
      const [a, b] = [await run(fromGguf), await run(fromCheckpoint)];
      assert.deepEqual(a.ids, b.ids);
      assert.deepEqual(a.g.tokens, b.g.tokens);
      for (const [i, lp] of a.g.tokenLogprobs.entries()) assert.ok(Math.abs(lp - b.g.tokenLogprobs[i]) < 1e-4, `token ${i}: ${lp} vs ${b.g.tokenLogprobs[i]}`);
      // Without a BOS the prompt is the reference's, and so are the tokens (PyTorch's, float32).
      if (a.ids.length === ref.prompt_ids.length) assert.deepEqual(a.g.tokens, ref.greedy_ids);
    });
  });
}

/** Per block of 32 along a row: the largest |x| (what Q8_0's and Q4_0's scales derive from). */
function blockMax(row: Float32Array, at: number): number {
  let m = 0;
  for (let j = 0; j < 32; j++) m = Math.max(m, Math.abs(row[at + j]));
  return m;
}

describe('GGUF block formats read back to the weights they were quantized from', () => {
  // A wrong layout (nibble order, scale position, sign) misplaces values by far more than a rounding step.
  for (const [file, step] of [
    ['qwen2-q8_0.gguf', (amax: number) => amax / 127],
    // Q4_0's codes run from -8 to 7 steps: the value opposite the block's largest is clipped, up to a full step.
    ['qwen2-q4_0.gguf', (amax: number) => (amax / 8) * 2],
  ] as const) {
    test(`${file}: every weight within half a quantization step (plus fp16 rounding of the scale) of the F32 file's`, () => {
      const exact = GgufCheckpoint.open(path.join(GGUF, 'qwen2-f32.gguf'));
      const quant = GgufCheckpoint.open(path.join(GGUF, file));
      try {
        let checked = 0;
        for (const [name, t] of quant.tensors) {
          if (t.dtype === 'F32') continue; // norms and biases stay F32
          const a = exact.readAll(exact.tensors.get(name)!);
          const b = quant.readAll(t);
          for (let at = 0; at < a.length; at += 32) {
            const tol = step(blockMax(a, at)) * 0.51 + 1e-3 * blockMax(a, at);
            for (let j = 0; j < 32; j++) {
              assert.ok(Math.abs(a[at + j] - b[at + j]) <= tol, `${name}[${at + j}]: ${b[at + j]} vs ${a[at + j]} (tolerance ${tol})`);
            }
          }
          checked++;
        }
        assert.ok(checked >= 14, `quantized tensors checked: ${checked}`);
      } finally {
        exact.close();
        quant.close();
      }
    });
  }

  test("a Q8_0 file converts to the model Ghostline's own int8 conversion of the checkpoint is (the same codes and scales)", async () => {
    // ggml's Q8_0 and Ghostline's int8 both store round(x / (amax / 127)) per block of 32, so the logits agree
    // to float rounding; both sit 0.67 from the float32 reference on this fixture, which is int8's own error.
    const ref = checkpointReference('qwen2');
    const logits = async (from: string, quant: 'fp32' | 'int8') => {
      const out = outDir(`q8-${quant}`);
      const r = await convertCheckpoint({ from, out, quant, accuracyLevel: 0 });
      const model = await OnnxCausalLM.load(r.onnxFile, JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8')), { threads: 1 });
      try {
        return (await model.forward([ref.prompt_ids], model.emptyCache())).logits;
      } finally {
        await model.release();
      }
    };
    const fromGguf = await logits(path.join(GGUF, 'qwen2-q8_0.gguf'), 'fp32');
    const int8 = await logits(path.join(CHECKPOINTS, 'qwen2'), 'int8');
    assert.ok(maxAbsDiff(fromGguf, int8) < 1e-4, `max |logit difference| ${maxAbsDiff(fromGguf, int8)}`);
    assert.ok(maxAbsDiff(fromGguf, ref.prefill_last_logits) > 1e-3, 'the Q8_0 weights are not the float32 ones');
  });
});

test("llama.cpp's q/k row permutation is undone: Hugging Face row (head, half, j) is GGUF row (head, j, half)", () => {
  // head size 8: HF rows 0..3 (first half) and 4..7 (second half) interleave as 0,4,1,5,2,6,3,7 in the GGUF.
  assert.deepEqual(
    Array.from({ length: 8 }, (_, r) => ggufRow(r, 8)),
    [0, 2, 4, 6, 1, 3, 5, 7],
  );
  assert.equal(ggufRow(8 + 5, 8), 8 + 3, 'the second head is offset by its head size');
});
