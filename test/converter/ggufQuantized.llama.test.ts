/**
 * GGUF files as users download them: the default model quantized by llama.cpp's own `llama-quantize` into the
 * formats the hub's GGUF repos carry (Q4_K_M, Q5_K_M, Q6_K, Q8_0, the legacy 4/5-bit ones, F16, BF16). Every
 * tensor Ghostline reads back must equal llama.cpp's own dequantization (gguf-py, from the same llama.cpp
 * source), value for value; and a K-quant file converts to a model that loads and answers.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { GgufCheckpoint } from '../../src/converter/gguf/ggufCheckpoint';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { ROOT } from '../helpers';
import { tempDir } from './checkpointFixtures';

const { ensureGguf, ensureQuantize, LLAMA_SOURCE } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  ensureGguf: (weights?: 'f32' | 'q8_0') => string;
  ensureQuantize: () => string;
  LLAMA_SOURCE: string;
};

/** llama-quantize's type names, and the ggml types each must bring into the file (the default model's rows are 256 or 704 wide). */
const FORMATS: Record<string, string[]> = {
  Q4_K_M: ['Q4_K', 'Q6_K'],
  Q5_K_M: ['Q5_K', 'Q6_K'],
  Q6_K: ['Q6_K'],
  Q8_0: ['Q8_0'],
  Q4_0: ['Q4_0'],
  Q4_1: ['Q4_1'],
  Q5_0: ['Q5_0'],
  Q5_1: ['Q5_1'],
  F16: ['F16'],
  BF16: ['BF16'],
};

const root = tempDir('gguf-quantized');
let f32: string;
let quantize: string;
before(() => {
  quantize = ensureQuantize();
  f32 = ensureGguf('f32');
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

function quantized(format: string): string {
  const out = path.join(root, `${format}.gguf`);
  if (!fs.existsSync(out)) {
    const r = spawnSync(quantize, [f32, out, format, '2'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `llama-quantize ${format}: ${r.stderr.slice(-2000)}`);
  }
  return out;
}

/** llama.cpp's dequantization of every tensor (tools/model/gguf_reference.py over its gguf-py). */
function reference(file: string): { name: string; type: string; values: Float32Array }[] {
  const out = path.join(root, `${path.basename(file)}.ref`);
  const r = spawnSync('/usr/bin/python3', ['-m', 'tools.model.gguf_reference', '--gguf-py', path.join(LLAMA_SOURCE, 'gguf-py'), file, out], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const index = JSON.parse(fs.readFileSync(path.join(out, 'index.json'), 'utf8')) as { name: string; type: string; file: string }[];
  return index.map((t) => {
    const b = fs.readFileSync(path.join(out, t.file));
    return { name: t.name, type: t.type, values: new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4) };
  });
}

describe("GGUF files written by llama.cpp's llama-quantize", () => {
  for (const [format, types] of Object.entries(FORMATS)) {
    test(`${format}: every tensor equals llama.cpp's own dequantization`, () => {
      const file = quantized(format);
      const ck = GgufCheckpoint.open(file);
      try {
        const seen = new Set<string>();
        let compared = 0;
        for (const ref of reference(file)) {
          const g = ck.header.tensors.get(ref.name);
          assert.ok(g, ref.name);
          assert.equal(g.type.name, ref.type, `${ref.name}: type`);
          seen.add(ref.type);
          // Storage order, without the Hugging Face renaming and the llama q/k un-permutation.
          const mine = new Float32Array(ref.values.length);
          const raw = new Uint8Array(g.bytes);
          const fd = fs.openSync(file, 'r');
          fs.readSync(fd, raw, 0, g.bytes, g.offset);
          fs.closeSync(fd);
          g.type.dequantize(raw, 0, ref.values.length / g.type.blockElements, mine, 0);
          let scale = 0;
          let worst = 0;
          for (let i = 0; i < mine.length; i++) {
            scale = Math.max(scale, Math.abs(ref.values[i]));
            worst = Math.max(worst, Math.abs(mine[i] - ref.values[i]));
          }
          // The same formula in float32 (numpy) and float64 (here): a few units in the last place at most.
          assert.ok(worst <= scale * 1e-6, `${ref.name} (${ref.type}): max |difference| ${worst} of ${scale}`);
          compared++;
        }
        for (const t of types) assert.ok(seen.has(t), `${format} brought ${[...seen].join(', ')}, not ${t}`);
        assert.ok(compared > 50, `${compared} tensors`);
      } finally {
        ck.close();
      }
    });
  }

  test("a Q4_K_M file (with the model's tokenizer.json beside it) converts to a model that loads and completes code", async () => {
    const dir = path.join(root, 'q4km');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(quantized('Q4_K_M'), path.join(dir, 'model-Q4_K_M.gguf'));
    // The default model's pre-tokenizer is its own (no llama.cpp preset): its tokenizer.json goes beside the file.
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(defaultModelDir(ROOT), f), path.join(dir, f));
    const out = path.join(root, 'q4km-model');
    await convertCheckpoint({ from: dir, out, quant: 'int8' });
    const engine = await Engine.load(out, { threads: 1 });
    try {
      const r = await engine.generate('def add(a, b):\n    return', { maxNewTokens: 6, temperature: 0, tokenHealing: false });
      assert.ok(r.tokens.length > 0);
      assert.match(r.text, /\S/, JSON.stringify(r.text));
    } finally {
      await engine.dispose();
    }
  });
});
