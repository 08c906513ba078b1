// The KV cache kept on the device (deviceCacheVariant.ts, deviceCacheMirror.ts), checked on the CPU: the variant
// graph runs there too, its copies (`cache_out.*`, or an export's `present.*`) held in memory instead of on the GPU. Fed its own copies, it
// must give the logits of the plain graph fed the host's buffers, through every way the engine changes a cache.
// A row written at the wrong place, or a copy used after the host changed its store, shows in the logits.
// The GPU tier (device.gpu.test.ts) runs the same variant on WebGPU.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { deviceCacheGraph } from '../../src/engine/model/deviceCacheGraph';
import { deviceCacheVariant, readGraph } from '../../src/engine/model/deviceCacheVariant';
import { readGraphOnly } from '../../src/engine/model/graphOnly';
import type { KvCache } from '../../src/engine/model/kvCache';
import { onnx } from 'onnx-proto';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { LeanKvCache } from '../../src/engine/model/leanCache';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { type AnyKvCache, OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { CHECKPOINTS } from '../converter/checkpointFixtures';
import { ROOT, TINY, argmax, maxAbsDiff } from '../helpers';

/** Float sums over the masked empty slots run in another order than over none: a few ulps, nothing more. */
const TOLERANCE = 1e-4;

interface Graph {
  name: string;
  file: string;
  config: Record<string, unknown>;
}

describe('the KV cache kept by the graph gives the plain graph logits', () => {
  const graphs: Graph[] = [];

  before(async () => {
    const bundled = readModelFolder(defaultModelDir(ROOT));
    graphs.push({ name: 'default model (int8)', file: bundled.onnxPath, config: bundled.config });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-device-cache-'));
    for (const [family, quant] of [
      ['qwen2', 'q4'],
      ['llama-untied', 'fp32'],
      ['starcoder2', 'int8'],
    ] as const) {
      const r = await convertCheckpoint({ from: path.join(CHECKPOINTS, family), out: path.join(out, family), quant });
      graphs.push({ name: `${family} (${quant})`, file: r.onnxFile, config: JSON.parse(fs.readFileSync(path.join(r.out, 'config.json'), 'utf8')) });
    }
  });

  test('prefill, decode, a chunk, a crop, a fork, growth past the capacity and a batch of two', async (t) => {
    for (const g of graphs) {
      const plain = await OnnxCausalLM.load(g.file, g.config, { threads: 1 });
      const kept = await OnnxCausalLM.load(g.file, g.config, { threads: 1, deviceCache: true });
      assert.equal(kept.deviceCacheWhyNot, null, `${g.name}: the variant loads`);
      assert.equal(plain.deviceCacheStats, null);
      const vocab = plain.contract.vocab;
      const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 37 + salt) % Math.min(vocab, 300));
      let worst = 0;
      // Each step feeds both models the same rows; `change` is what the engine does to a cache between runs.
      let p: AnyKvCache = plain.emptyCache();
      let k: AnyKvCache = kept.emptyCache();
      const step = async (what: string, rows: number[][], change: (c: LeanKvCache) => LeanKvCache = (c) => c) => {
        const a = await plain.forward(rows, change(p as LeanKvCache), rows[0].length);
        const b = await kept.forward(rows, change(k as LeanKvCache), rows[0].length);
        const diff = maxAbsDiff(a.logits, b.logits);
        assert.ok(diff < TOLERANCE, `${g.name}, ${what}: logits differ by ${diff}`);
        for (let r = 0; r < a.logits.length / vocab; r++)
          assert.equal(
            argmax(b.logits.subarray(r * vocab, (r + 1) * vocab)),
            argmax(a.logits.subarray(r * vocab, (r + 1) * vocab)),
            `${g.name}, ${what}, row ${r}`,
          );
        worst = Math.max(worst, diff);
        p = a.cache;
        k = b.cache;
      };
      await step('prefill', [ids(24, 5)]);
      for (let i = 0; i < 4; i++) await step(`decode ${i}`, [[ids(1, 11 + i)[0]]]);
      await step('a chunk after the cache', [ids(5, 17)]);
      const afterRun = { ...kept.deviceCacheStats! };
      await step('a crop, then other tokens (the copy stays current)', [ids(3, 23)], (c) => c.crop(10));
      assert.equal(kept.deviceCacheStats!.kept, afterRun.kept + 1, `${g.name}: a crop keeps the copy`);
      await step('a fork (a new store goes up)', [ids(2, 29)], (c) => c.fork(12));
      assert.equal(kept.deviceCacheStats!.uploaded, afterRun.uploaded + 1, `${g.name}: a fork uploads`);
      await step('past the capacity (a larger store)', [ids(260, 31)]);
      await step('decode in the larger store', [[7]]);
      await step('a batch of two', [[3], [9]], (c) => c.gather([0, 0]));
      await step('decode the batch', [[4], [5]]);
      const s = kept.deviceCacheStats!;
      t.diagnostic(`${g.name}: max |logit diff| ${worst.toExponential(2)}; ${s.kept} runs on the kept copy, ${s.uploaded} uploads`);
      assert.equal(s.kept, 8, `${g.name}: decode, chunk, crop and the steps after each new store ran on the kept copy`);
      assert.equal(s.uploaded, 4, `${g.name}: the first run, the fork, the growth and the gather uploaded`);
      await plain.release();
      await kept.release();
    }
  });

  test('moved runs: a store assembled on the host goes up, then the copy is used again', async () => {
    const g = graphs[0];
    const plain = await OnnxCausalLM.load(g.file, g.config, { threads: 1 });
    const kept = await OnnxCausalLM.load(g.file, g.config, { threads: 1, deviceCache: true });
    const prompt = Array.from({ length: 40 }, (_, i) => (i * 13 + 3) % 200);
    const a0 = await plain.forward([prompt.slice(0, 30)], plain.emptyCache());
    const b0 = await kept.forward([prompt.slice(0, 30)], kept.emptyCache());
    // The last 20 tokens move 4 places later, as an edit above them would move them (keys turned on the host).
    const invFreq = Float64Array.from({ length: plain.contract.headDim / 2 }, (_, j) => 10000 ** ((-2 * j) / plain.contract.headDim));
    const shifted = [...prompt.slice(0, 10), 1, 2, 3, 4, ...prompt.slice(10, 30)];
    const run = [{ from: 10, to: 14, length: 20 }];
    const pa = LeanKvCache.assemble(a0.cache as LeanKvCache, 10, run, shifted, invFreq);
    const pb = LeanKvCache.assemble(b0.cache as LeanKvCache, 10, run, shifted, invFreq);
    const before = { ...kept.deviceCacheStats! };
    const a1 = await plain.forward([[1, 2, 3, 4]], pa, 4);
    const b1 = await kept.forward([[1, 2, 3, 4]], pb, 4);
    assert.ok(maxAbsDiff(a1.logits, b1.logits) < TOLERANCE);
    const a2 = await plain.forward([[5]], (a1.cache as LeanKvCache).through(shifted, 34));
    const b2 = await kept.forward([[5]], (b1.cache as LeanKvCache).through(shifted, 34));
    assert.ok(maxAbsDiff(a2.logits, b2.logits) < TOLERANCE, 'the moved run is read from the copy made after the upload');
    assert.deepEqual(kept.deviceCacheStats, { kept: before.kept + 1, uploaded: before.uploaded + 1, uploadedBytes: before.uploadedBytes + pb.bytes });
    await plain.release();
    await kept.release();
  });

  test('graphs that cannot keep it say why, and run as before', async () => {
    const junk = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-device-cache-')), 'model.onnx');
    fs.writeFileSync(junk, Uint8Array.from([1, 2, 3, 255]));
    assert.match((deviceCacheVariant(readGraph(junk)) as { why: string }).why, /^the graph file could not be read \(/);
    const hf = readModelFolder(TINY);
    assert.deepEqual(deviceCacheGraph(readGraphOnly(hf.onnxPath)), { why: 'not a Ghostline lean graph' });
    const lean = deviceCacheVariant(readGraph(graphs[0].file));
    assert.ok('bytes' in lean);
    fs.writeFileSync(junk, lean.bytes);
    assert.deepEqual(deviceCacheVariant(readGraph(junk)), { why: 'the graph already has device cache outputs' });
    const exported = deviceCacheVariant(readGraph(hf.onnxPath));
    assert.ok('bytes' in exported);
    fs.writeFileSync(junk, exported.bytes);
    assert.deepEqual(deviceCacheVariant(readGraph(junk)), { why: '"past_key_values.0.key" or "present.0.key.rows" is already an output' });
    // An export edited into what the variant cannot take: an old opset, a missing present output, no past at all.
    const edited = (edit: (g: onnx.GraphProto, m: onnx.ModelProto) => void) => {
      const m = readGraphOnly(hf.onnxPath);
      edit(m.graph as onnx.GraphProto, m);
      fs.writeFileSync(junk, onnx.ModelProto.encode(m).finish());
      return deviceCacheVariant(readGraph(junk));
    };
    assert.deepEqual(
      edited((_, m) => {
        m.opsetImport = [{ domain: '', version: 9 }];
      }),
      { why: 'opset 9 is older than 10' },
    );
    assert.deepEqual(
      edited((g) => {
        g.output = g.output.filter((o) => o.name !== 'present.1.value');
      }),
      { why: 'it has no "past_key_values.1.value" input or "present.1.value" output' },
    );
    assert.deepEqual(
      edited((g) => {
        g.input = g.input.filter((i) => !i.name?.startsWith('past_key_values.'));
      }),
      { why: 'not a decoder export with past_key_values inputs' },
    );
    const off = await OnnxCausalLM.load(graphs[0].file, graphs[0].config, { threads: 1, deviceCache: false });
    assert.equal(off.deviceCacheWhyNot, 'turned off');
    assert.equal(off.deviceCacheStats, null);
    await off.release();
  });
});

// Hugging Face exports (exportCacheGraph.ts): `present.*` is fed back as the next run's past, cut in the graph
// to the mask's length, and only each run's rows come back to the host. One fixture per export layout Ghostline
// loads: torch.onnx with inline weights, Optimum's merged decoder (an If on use_cache_branch), weights in two
// external data files, a float16 cache, no position_ids input with int8 weights.
describe('the KV cache kept by an export gives the plain export logits', () => {
  const FAMILIES = path.join(ROOT, 'test', 'fixtures', 'families');
  const exports = [TINY, ...['smollm2', 'qwen2.5-coder', 'starcoder2', 'deepseek-coder'].map((f) => path.join(FAMILIES, f))];

  test("an export without num_logits_to_keep: the variant returns only the rows asked for, the plain export's last rows", async () => {
    const folder = readModelFolder(path.join(FAMILIES, 'smollm2'));
    const variant = deviceCacheVariant(readGraph(folder.onnxPath));
    assert.ok('bytes' in variant);
    const session = await InferenceSession.create(variant.bytes, {
      extra: { session: { model_external_initializers_file_folder_path: path.dirname(folder.onnxPath) } },
    });
    const plain = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
    const c = plain.contract;
    const ids = [5, 42, 7, 99, 13, 8];
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      attention_mask: new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
      position_ids: new Tensor('int64', BigInt64Array.from(ids.keys(), BigInt), [1, ids.length]),
      use_cache_branch: new Tensor('bool', new Uint8Array([0]), [1]),
    };
    for (const kind of ['key', 'value']) feeds[`past_key_values.0.${kind}`] = new Tensor('float32', new Float32Array(0), [1, c.kvHeads, 0, c.headDim]);
    for (const keep of [2, 0]) {
      const out = await session.run({ ...feeds, num_logits_to_keep: new Tensor('int64', BigInt64Array.of(BigInt(keep)), []) });
      const rows = keep || ids.length;
      assert.deepEqual((out.logits as Tensor).dims, [1, rows, c.vocab], `keep ${keep}`);
      const expected = await plain.forward([ids], plain.emptyCache(), rows);
      assert.equal(maxAbsDiff((out.logits as Tensor).data as Float32Array, expected.logits), 0);
    }
    await session.release();
    await plain.release();
  });

  test('prefill, decode, a chunk, a crop, a fork, a batch of two, and a cache the copy is not of', async (t) => {
    for (const dir of exports) {
      const folder = readModelFolder(dir);
      const name = path.relative(ROOT, folder.onnxPath);
      const plain = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
      const kept = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1, deviceCache: true });
      assert.equal(kept.deviceCacheWhyNot, null, `${name}: the variant loads`);
      // An export without num_logits_to_keep gets it in the variant: only the rows asked for come back.
      assert.equal(kept.contract.hasNumLogitsToKeep, true, `${name}: the variant cuts the logits`);
      const vocab = plain.contract.vocab;
      const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 37 + salt) % Math.min(vocab, 300));
      let p = plain.emptyCache() as KvCache;
      let k = kept.emptyCache() as KvCache;
      let worst = 0;
      const step = async (what: string, rows: number[][], change: (c: KvCache) => KvCache = (c) => c, keep = rows[0].length) => {
        const a = await plain.forward(rows, change(p), keep);
        const b = await kept.forward(rows, change(k), keep);
        const diff = maxAbsDiff(a.logits, b.logits);
        assert.ok(diff < TOLERANCE, `${name}, ${what}: logits differ by ${diff}`);
        worst = Math.max(worst, diff);
        [p, k] = [a.cache as KvCache, b.cache as KvCache];
      };
      await step('prefill', [ids(12, 5)]);
      for (let i = 0; i < 3; i++) await step(`decode ${i}`, [[ids(1, 11 + i)[0]]]);
      await step('a chunk after the cache, its last row kept', [ids(4, 17)], (c) => c, 1);
      // The host's copy, built from the rows alone, is the plain export's whole cache.
      assert.ok(maxAbsDiff(k.tensors[1].data as Float32Array, p.tensors[1].data as Float32Array) === 0, `${name}: host copy`);
      const afterRun = { ...kept.deviceCacheStats! };
      const [olderP, olderK] = [p, k];
      await step('a crop, then other tokens (the graph cuts the copy)', [ids(3, 23)], (c) => c.crop(9));
      await step('a fork of the result', [ids(2, 29)], (c) => c.fork(10));
      assert.deepEqual(kept.deviceCacheStats, { ...afterRun, kept: afterRun.kept + 2 }, `${name}: a crop and a fork read the copy`);
      // The plain export fed the kept model's host copy: what a fall back to the CPU reads.
      const host = await plain.forward([[7]], k);
      const onCopy = await kept.forward([[7]], k);
      assert.ok(maxAbsDiff(host.logits, onCopy.logits) < TOLERANCE, `${name}: the host copy after kept runs`);
      k = onCopy.cache as KvCache;
      p = host.cache as KvCache;
      await step('a cache from before the last runs (it goes up)', [[8]], (c) => (c === k ? olderK : olderP).crop(olderK.length - 1));
      await step('a batch of two (a new cache goes up)', [[3], [9]], (c) => c.gather([0, 0]));
      await step('decode the batch', [[4], [5]]);
      const s = kept.deviceCacheStats!;
      t.diagnostic(`${name}: max |logit diff| ${worst.toExponential(2)}; ${s.kept} runs on the kept copy, ${s.uploaded} uploads`);
      assert.equal(s.uploaded, 3, `${name}: the first run, the older cache and the gather uploaded`);
      assert.equal(s.kept, 8, `${name}: every other run read the copy`);
      await plain.release();
      await kept.release();
    }
  });
});
