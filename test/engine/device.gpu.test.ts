// The GPU tier (npm test's "gpu" step): onnxruntime's WebGPU provider on SwiftShader, a Vulkan implementation
// on the CPU. It proves that the graphs run on the GPU path and agree with the CPU; it says nothing of speed
// (SwiftShader takes about a second per decode step of the default model).
//
// The agreement rule, for logits and for whole generations: the GPU's greedy token equals the CPU's, except
// where the CPU's two best tokens are within NEAR_TIE nats of each other and the GPU took the second (float
// sums run in another order on the GPU; int8 and q4 kernels differ too). Such a position is reported, and a
// generation is compared up to it only.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { describeDevice, describeGpuCache } from '../../src/engine/shared/device';
import { special, text, type Prompt } from '../../src/engine/shared/prompt';
import type { GenerateResult } from '../../src/engine/shared/types';
import { Engine } from '../../src/engine/worker/engine';
import { DeviceVerdicts } from '../../src/engine/worker/deviceVerdicts';
import { CHECKPOINTS } from '../converter/checkpointFixtures';
import { ROOT, TINY, argmax, maxAbsDiff } from '../helpers';
import { useSwiftShader } from '../swiftShader';

const skip = useSwiftShader();
const NEAR_TIE = 0.3;
const BUNDLED = defaultModelDir(path.join(__dirname, '..', '..', '..'));

const CODE = `import os


def read_lines(path):
    with open(path) as f:
        return [line.rstrip() for line in f]


def count_words(path):
    total = 0
    for line in read_lines(path):
`;

/** log-softmax gap between a row's best and second-best token, and the two ids. */
function topTwo(row: Float32Array): { first: number; second: number; gap: number } {
  let first = 0;
  let second = 1;
  if (row[second] > row[first]) [first, second] = [second, first];
  for (let i = 2; i < row.length; i++) {
    if (row[i] > row[first]) [first, second] = [i, first];
    else if (row[i] > row[second]) second = i;
  }
  return { first, second, gap: row[first] - row[second] };
}

/** Each row's argmax agrees, or the CPU has a near tie there and the GPU took its runner-up. */
function compareRows(cpu: Float32Array, gpu: Float32Array, vocab: number): { rows: number; nearTies: number; maxDiff: number } {
  const rows = cpu.length / vocab;
  let nearTies = 0;
  for (let r = 0; r < rows; r++) {
    const c = cpu.subarray(r * vocab, (r + 1) * vocab);
    const g = gpu.subarray(r * vocab, (r + 1) * vocab);
    const a = argmax(g);
    const t = topTwo(c);
    if (a === t.first) continue;
    assert.ok(a === t.second && t.gap < NEAR_TIE, `row ${r}: GPU picks ${a}, CPU ${t.first} (runner-up ${t.second}, ${t.gap.toFixed(3)} nats ahead)`);
    nearTies++;
  }
  return { rows, nearTies, maxDiff: maxAbsDiff(cpu, gpu) };
}

interface Graph {
  name: string;
  file: string;
  config: Record<string, unknown>;
  ids: number[];
}

describe('WebGPU on SwiftShader: the graphs agree with the CPU', { skip }, () => {
  const graphs: Graph[] = [];

  before(async () => {
    const bundled = readModelFolder(BUNDLED);
    const tok = new TextTokenizer(bundled.tokenizerJson, bundled.tokenizerConfig);
    graphs.push({ name: 'default model (lean int8)', file: bundled.onnxPath, config: bundled.config, ids: tok.encode(CODE).slice(0, 48) });
    // A Qwen2 checkpoint through the converter's q4 lean graph: 4-bit MatMulNBits and Qwen's attention biases.
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-gpu-qwen-'));
    const qwen = await convertCheckpoint({ from: path.join(CHECKPOINTS, 'qwen2'), out: path.join(out, 'q4'), quant: 'q4' });
    const qwenConfig = JSON.parse(fs.readFileSync(path.join(qwen.out, 'config.json'), 'utf8'));
    graphs.push({
      name: 'Qwen2 shape (converted, q4)',
      file: qwen.onnxFile,
      config: qwenConfig,
      ids: Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 500),
    });
    // The Hugging Face decoder contract (past_key_values, an empty past at first), as Optimum exports have it.
    const tiny = readModelFolder(TINY);
    graphs.push({
      name: 'Hugging Face contract (torch.onnx)',
      file: tiny.onnxPath,
      config: tiny.config,
      ids: Array.from({ length: 32 }, (_, i) => (i * 13 + 5) % 200),
    });
    // Optimum's merged decoder: the past is read inside If branches. (A float16 export cannot run here:
    // SwiftShader has no shader-f16.)
    const merged = readModelFolder(path.join(ROOT, 'test', 'fixtures', 'families', 'smollm2'));
    graphs.push({
      name: 'Optimum merged decoder (smollm2 layout)',
      file: merged.onnxPath,
      config: merged.config,
      ids: Array.from({ length: 24 }, (_, i) => (i * 31 + 7) % 300),
    });
  });

  test('prefill of every position, then decode steps on the cache: same greedy tokens (near ties reported)', async (t) => {
    for (const g of graphs) {
      const cpu = await OnnxCausalLM.load(g.file, g.config, { device: 'cpu', threads: 1 });
      const gpu = await OnnxCausalLM.load(g.file, g.config, { device: 'gpu' });
      assert.equal(gpu.device, 'gpu');
      const keep = g.ids.length;
      let c = await cpu.forward([g.ids], cpu.emptyCache(), keep);
      let p = await gpu.forward([g.ids], gpu.emptyCache(), keep);
      const prefill = compareRows(c.logits, p.logits, cpu.contract.vocab);
      // Decode on each device's own cache with the CPU's tokens: the cache written on the GPU is read back right.
      let decodeTies = 0;
      let decodeDiff = 0;
      for (let step = 0; step < 3; step++) {
        const next = argmax(c.logits.subarray(c.logits.length - cpu.contract.vocab));
        c = await cpu.forward([[next]], c.cache);
        p = await gpu.forward([[next]], p.cache);
        const r = compareRows(c.logits, p.logits, cpu.contract.vocab);
        decodeTies += r.nearTies;
        decodeDiff = Math.max(decodeDiff, r.maxDiff);
      }
      // A keystroke's crop, then a chunk: the GPU's copy is longer than the cache, and the graph reads its start.
      const cut = g.ids.length - 4;
      c = await cpu.forward([[5, 6, 7]], c.cache.crop(cut), 3);
      p = await gpu.forward([[5, 6, 7]], p.cache.crop(cut), 3);
      const afterCrop = compareRows(c.logits, p.logits, cpu.contract.vocab);
      decodeTies += afterCrop.nearTies;
      decodeDiff = Math.max(decodeDiff, afterCrop.maxDiff);
      // Both contracts keep the cache on the GPU (deviceCacheVariant.ts): the prefill uploads it, each later run
      // reads the copy the last run left there.
      const kept = gpu.deviceCacheStats;
      assert.deepEqual(kept && { kept: kept.kept, uploaded: kept.uploaded }, { kept: 4, uploaded: 1 }, g.name);
      t.diagnostic(
        `${g.name}: ${prefill.rows} prefill rows, ${prefill.nearTies} near ties, max |logit diff| ${prefill.maxDiff.toFixed(3)}; ` +
          `3 decode steps and a chunk after a crop, ${decodeTies} near ties, max |logit diff| ${decodeDiff.toFixed(3)}; ` +
          (kept ? `cache kept on the GPU for ${kept.kept} runs, uploaded ${kept.uploaded}` : `cache uploaded every run (${gpu.deviceCacheWhyNot})`),
      );
      assert.ok(prefill.nearTies <= Math.ceil(prefill.rows / 10), `${g.name}: ${prefill.nearTies} near ties of ${prefill.rows} rows`);
      await cpu.release();
      await gpu.release();
    }
  });
});

describe("WebGPU on SwiftShader: the engine gives the CPU's suggestions", { skip }, () => {
  const FIM = (above: string): Prompt => [
    special('<fim_prefix>'),
    text(`${above}${CODE}        words = `),
    special('<fim_suffix>'),
    text('\n    return total\n'),
    special('<fim_middle>'),
  ];
  /** A session as the editor drives one: a cold prompt, keystrokes that reuse the cache (token healing on), a FIM anchor moved by an edit above (moved runs), and a prompt that repeats itself (prompt lookup drafts). */
  const SESSION: { name: string; prompt: Prompt; options: Record<string, unknown> }[] = [
    { name: 'cold', prompt: `${CODE}        words = `, options: {} },
    { name: 'keystroke', prompt: `${CODE}        words = line.sp`, options: { tokenHealing: true } },
    { name: 'fim', prompt: FIM(''), options: {} },
    { name: 'edit above (moved runs)', prompt: FIM('import sys\n'), options: {} },
    {
      name: 'prompt lookup',
      prompt: `${CODE}        words = line.split()\n        total += len(words)\n    return total\n\n\ndef count_lines(path):\n    total = 0\n    for line in read_lines(path):\n`,
      options: { speculativeTokens: 8 },
    },
  ];

  test('the same greedy tokens and the same cache reuse, request by request', async (t) => {
    const run = async (device: 'cpu' | 'gpu', t: { diagnostic: (s: string) => void }) => {
      const engine = await Engine.load(BUNDLED, { device, moveCachedRunsOverMs: 0, threads: 1 });
      assert.equal(engine.info.device.device, device);
      if (device === 'gpu') assert.match(describeDevice(engine.info.device), /^GPU \(WebGPU on Vulkan, KV cache kept on the GPU\): /);
      const results: { result: GenerateResult; cached: readonly number[] }[] = [];
      for (const r of SESSION) {
        const result = await engine.generate(r.prompt, { temperature: 0, maxNewTokens: 6, ...r.options });
        results.push({ result, cached: [...engine.cachedTokenIds] });
      }
      const kept = engine.gpuCache;
      if (device === 'gpu') {
        // Keystrokes, the moved FIM and prompt lookup's drafts reuse the store in place: its copy on the GPU serves
        // them. Only the first prompt and the moved runs (assembled on the host) upload.
        assert.ok(kept && kept.kept > 3 * kept.uploaded, `the GPU's copy served most runs: ${kept && describeGpuCache(kept)}`);
        t.diagnostic(`a session of ${SESSION.length} requests on the GPU: ${describeGpuCache(kept)}`);
      } else assert.equal(kept, null);
      await engine.dispose();
      return results;
    };
    const cpu = await run('cpu', t);
    const gpu = await run('gpu', t);
    const check = await OnnxCausalLM.load(readModelFolder(BUNDLED).onnxPath, readModelFolder(BUNDLED).config, { device: 'cpu', threads: 1 });
    let nearTies = 0;
    for (const [i, r] of SESSION.entries()) {
      const a = cpu[i].result;
      const b = gpu[i].result;
      assert.equal(b.stats.reusedTokens, a.stats.reusedTokens, `${r.name}: tokens reused from the cache`);
      const n = a.tokens.findIndex((tok, k) => b.tokens[k] !== tok);
      if (n < 0 && a.tokens.length === b.tokens.length) continue;
      // Diverged at token n: the CPU's context there is the prompt it fed plus its first n tokens.
      const fed = cpu[i].cached.length - a.tokens.length + 1;
      const context = cpu[i].cached.slice(0, fed + n);
      const out = await check.forward([context], check.emptyCache());
      const top = topTwo(out.logits);
      assert.ok(
        top.gap < NEAR_TIE && b.tokens[n] === top.second,
        `${r.name}: GPU ${JSON.stringify(b.text)} against CPU ${JSON.stringify(a.text)} at token ${n}, not a near tie (${top.gap.toFixed(3)} nats)`,
      );
      nearTies++;
      t.diagnostic(`${r.name}: a near tie at token ${n} (${top.gap.toFixed(3)} nats): compared up to it`);
    }
    await check.release();
    t.diagnostic(`${SESSION.length} requests, ${nearTies} near ties; texts: ${gpu.map((g) => JSON.stringify(g.result.text)).join(', ')}`);
    assert.ok(cpu[1].result.stats.reusedTokens > 0 && cpu[3].result.stats.reusedTokens > 0, 'the keystroke and the moved FIM reuse the cache');
  });

  test('auto measures both devices once, keeps the faster, and the next load reads the verdict', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-verdicts-')), 'device.json');
    const first = await Engine.load(BUNDLED, { device: 'auto', deviceVerdictFile: file });
    const d = first.info.device;
    await first.dispose();
    assert.ok(d.measured, 'measured on the first load');
    assert.match(d.reason, /^measured now: /);
    // SwiftShader emulates a GPU on the CPU: the real CPU path wins, and by far.
    assert.equal(d.device, 'cpu');
    assert.ok(d.measured.gpu.decodeMsPerToken > d.measured.cpu.decodeMsPerToken);
    const stored = Object.values(JSON.parse(fs.readFileSync(file, 'utf8')).verdicts);
    assert.equal(stored.length, 1);
    const second = await Engine.load(BUNDLED, { device: 'auto', deviceVerdictFile: file });
    const again = second.info.device;
    await second.dispose();
    assert.match(again.reason, /^measured on \d{4}-\d\d-\d\d: CPU/);
    // The remembered numbers, not new ones: the second load did not measure again.
    assert.deepEqual(again.measured, d.measured);
    assert.deepEqual(Object.values(JSON.parse(fs.readFileSync(file, 'utf8')).verdicts), stored);
    assert.ok(new DeviceVerdicts(file).get('no such key') === null);
  });
});
