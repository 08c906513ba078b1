/**
 * Contract tests with random-weight models in the layouts of real code-model families
 * (test/fixtures/families, made by tools/model/make_family_fixtures.py): each folder is a different
 * ONNX export variant found in the wild. The engine must load each one, read its IO contract from the
 * session, match the torch reference, reuse its KV cache correctly and pick the family's FIM template.
 *
 * Tolerances: 1e-4 (max abs logit difference) for float32 KV and logits; 2e-2 for starcoder2, whose KV
 * cache and logits are float16 (one float16 ulp is 2^-7 = 0.0078 for logits in [8, 16)).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { packageRoot } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { KvCache } from '../../src/engine/model/kvCache';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { argmax, loadReference as loadSharedReference, maxAbsDiff } from '../helpers';

const ROOT = packageRoot(__dirname);
const FAMILIES = path.join(ROOT, 'test', 'fixtures', 'families');

interface Expected {
  name: string;
  modelType: string;
  architecture: string;
  onnxFile: string;
  /** Other files the ONNX graph needs next to it (external data). */
  dataFiles: string[];
  kvHeads: number;
  heads: number;
  headDim: number;
  kvType: 'float32' | 'float16';
  logitsType: 'float32' | 'float16';
  hasPositionIds: boolean;
  hasUseCacheBranch: boolean;
  hasNumLogitsToKeep: boolean;
  tol: number;
  fimFamily: string;
  fileHeader: boolean;
  eos: string;
  specials: string[];
}

const EXPECTED: Expected[] = [
  {
    name: 'qwen2.5-coder',
    modelType: 'qwen2',
    architecture: 'Qwen2ForCausalLM',
    onnxFile: 'model.onnx',
    dataFiles: ['model.onnx_data', 'model.onnx_data_1'],
    kvHeads: 2,
    heads: 14,
    headDim: 64,
    kvType: 'float32',
    logitsType: 'float32',
    hasPositionIds: true,
    hasUseCacheBranch: false,
    hasNumLogitsToKeep: true,
    tol: 1e-4,
    fimFamily: 'qwen2.5-coder',
    fileHeader: true,
    eos: '<|endoftext|>',
    specials: [
      '<|endoftext|>',
      '<|im_start|>',
      '<|im_end|>',
      '<|fim_prefix|>',
      '<|fim_middle|>',
      '<|fim_suffix|>',
      '<|fim_pad|>',
      '<|repo_name|>',
      '<|file_sep|>',
    ],
  },
  {
    name: 'smollm2',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    onnxFile: 'decoder_model_merged.onnx',
    dataFiles: [],
    kvHeads: 3,
    heads: 9,
    headDim: 64,
    kvType: 'float32',
    logitsType: 'float32',
    hasPositionIds: true,
    hasUseCacheBranch: true,
    hasNumLogitsToKeep: false,
    tol: 1e-4,
    fimFamily: 'starcoder',
    fileHeader: true,
    eos: '<|endoftext|>',
    specials: [
      '<|endoftext|>',
      '<|im_start|>',
      '<|im_end|>',
      '<repo_name>',
      '<reponame>',
      '<file_sep>',
      '<filename>',
      '<gh_stars>',
      '<issue_start>',
      '<fim_prefix>',
      '<fim_middle>',
      '<fim_suffix>',
      '<fim_pad>',
    ],
  },
  {
    name: 'starcoder2',
    modelType: 'starcoder2',
    architecture: 'Starcoder2ForCausalLM',
    onnxFile: 'model_fp16.onnx',
    dataFiles: [],
    kvHeads: 2,
    heads: 4,
    headDim: 128,
    kvType: 'float16',
    logitsType: 'float16',
    hasPositionIds: true,
    hasUseCacheBranch: false,
    hasNumLogitsToKeep: true,
    tol: 2e-2,
    fimFamily: 'starcoder',
    fileHeader: true,
    eos: '<|endoftext|>',
    specials: ['<|endoftext|>', '<fim_prefix>', '<fim_middle>', '<fim_suffix>', '<fim_pad>', '<repo_name>', '<file_sep>'],
  },
  {
    name: 'deepseek-coder',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    onnxFile: 'model_quantized.onnx',
    dataFiles: [],
    kvHeads: 4,
    heads: 4,
    headDim: 128,
    kvType: 'float32',
    logitsType: 'float32',
    hasPositionIds: false,
    hasUseCacheBranch: false,
    hasNumLogitsToKeep: true,
    tol: 1e-4,
    fimFamily: 'deepseek-coder',
    fileHeader: false,
    eos: '<｜end▁of▁sentence｜>',
    specials: ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<｜fim▁hole｜>', '<｜fim▁begin｜>', '<｜fim▁end｜>', '<|EOT|>'],
  },
];

/** What the family fixtures' reference.json adds to tiny-llama's. */
interface FamilyReference {
  n_decode: number;
  eos_token_ids: number[];
  special_tokens: Record<string, number>;
  tokenizer_samples: { text: string; ids: number[] }[];
}

const loadReference = (dir: string) => loadSharedReference<FamilyReference>(dir);

test('every family folder under test/fixtures/families is covered here', () => {
  const dirs = fs
    .readdirSync(FAMILIES)
    .filter((d) => fs.statSync(path.join(FAMILIES, d)).isDirectory())
    .sort();
  assert.deepEqual(dirs, EXPECTED.map((e) => e.name).sort());
});

test('with several ONNX variants in one folder the default is model.onnx over model_fp16.onnx, and onnxFile overrides it', async () => {
  // A copy of the qwen folder with a second graph file that shares the same external data files.
  const dst = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-family-'));
  try {
    fs.cpSync(path.join(FAMILIES, 'qwen2.5-coder'), dst, { recursive: true });
    fs.copyFileSync(path.join(dst, 'onnx', 'model.onnx'), path.join(dst, 'onnx', 'model_fp16.onnx'));
    assert.equal(readModelFolder(dst).onnxPath, path.join(dst, 'onnx', 'model.onnx'));
    const engine = await Engine.load(dst, { threads: 1, onnxFile: 'model_fp16.onnx' });
    try {
      assert.equal(engine.info.onnxFile, path.join(dst, 'onnx', 'model_fp16.onnx'));
      const ref = loadReference(dst);
      const r = await engine.generate(ref.prompt, { maxNewTokens: ref.n_decode });
      assert.deepEqual(r.tokens, ref.greedy_tokens.slice(0, ref.n_decode));
    } finally {
      await engine.dispose();
    }
  } finally {
    fs.rmSync(dst, { recursive: true, force: true });
  }
});

for (const exp of EXPECTED) {
  describe(exp.name, () => {
    const dir = path.join(FAMILIES, exp.name);
    const ref = loadReference(dir);
    let engine: Engine;
    let model: OnnxCausalLM;
    before(async () => {
      engine = await Engine.load(dir, { threads: 1 });
      const folder = readModelFolder(dir);
      model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
    });
    after(async () => {
      await engine?.dispose();
      await model?.release();
    });

    test('the folder has the family config and only the expected ONNX file (plus its external data)', () => {
      const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      assert.equal(config.model_type, exp.modelType);
      assert.deepEqual(config.architectures, [exp.architecture]);
      assert.equal(config.num_attention_heads, exp.heads);
      assert.equal(config.num_key_value_heads, exp.kvHeads);
      assert.equal(config.head_dim, exp.headDim);
      assert.deepEqual(fs.readdirSync(path.join(dir, 'onnx')).sort(), [exp.onnxFile, ...exp.dataFiles].sort());
      if (exp.dataFiles.length > 0) {
        // The weights really are outside the graph file.
        const graphBytes = fs.statSync(path.join(dir, 'onnx', exp.onnxFile)).size;
        const dataBytes = exp.dataFiles.reduce((s, f) => s + fs.statSync(path.join(dir, 'onnx', f)).size, 0);
        assert.ok(graphBytes * 10 < dataBytes, `graph ${graphBytes} B, external data ${dataBytes} B`);
      }
    });

    test('the engine picks the expected ONNX file and reads the IO contract from the session', () => {
      assert.equal(engine.info.onnxFile, path.join(dir, 'onnx', exp.onnxFile));
      assert.equal(engine.info.modelType, exp.modelType);
      assert.equal(engine.info.layers, 1);
      const c = model.contract;
      assert.equal(c.layers, 1);
      assert.equal(c.kvHeads, exp.kvHeads);
      assert.equal(c.headDim, exp.headDim);
      assert.equal(c.kvType, exp.kvType);
      assert.equal(c.logitsType, exp.logitsType);
      assert.equal(c.hasPositionIds, exp.hasPositionIds);
      assert.equal(c.hasUseCacheBranch, exp.hasUseCacheBranch);
      assert.equal(c.hasNumLogitsToKeep, exp.hasNumLogitsToKeep);
      assert.equal(c.vocab, ref.vocab);
      const bytes = exp.kvType === 'float16' ? 2 : 4;
      assert.equal(engine.info.kvBytesPerToken, 2 * exp.kvHeads * exp.headDim * bytes);
    });

    test('eos ids and special tokens come from the folder', () => {
      assert.deepEqual(engine.info.eosIds, [ref.special_tokens[exp.eos]]);
      assert.deepEqual(ref.eos_token_ids, engine.info.eosIds);
      for (const s of exp.specials) assert.equal(engine.info.specialTokens[s], ref.special_tokens[s], s);
    });

    /** The BOS token id when the tokenizer adds one (DeepSeek-Coder), else undefined. */
    const bosId = (): number | undefined => {
      const cfg = readModelFolder(dir).tokenizerConfig as { add_bos_token?: boolean; bos_token?: string | { content: string } };
      if (cfg.add_bos_token !== true || !cfg.bos_token) return undefined;
      return engine.info.specialTokens[typeof cfg.bos_token === 'string' ? cfg.bos_token : cfg.bos_token.content];
    };
    /** The reference prompt without a leading BOS text: the engine's encoding adds the token itself. */
    const promptText = (): string => {
      const id = bosId();
      const bos = id === undefined ? undefined : Object.keys(engine.info.specialTokens).find((k) => engine.info.specialTokens[k] === id);
      return bos && ref.prompt.startsWith(bos) ? ref.prompt.slice(bos.length) : ref.prompt;
    };

    test('the JS tokenizer gives the ids the reference was made with', () => {
      const folder = readModelFolder(dir);
      const tok = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
      assert.deepEqual(tok.encode(promptText()), ref.prompt_ids);
      for (const sample of ref.tokenizer_samples) {
        // The engine encodes as Hugging Face does by default: with the begin-of-sentence token where the model wants one.
        const expected = bosId() !== undefined && sample.ids[0] !== bosId() ? [bosId()!, ...sample.ids] : sample.ids;
        assert.deepEqual(tok.encode(sample.text), expected, JSON.stringify(sample.text));
        assert.equal(tok.decode(sample.ids), sample.text, 'decode round-trips');
      }
      assert.ok(tok.vocabSize <= model.contract.vocab);
    });

    test(`prefill plus decode steps match the PyTorch reference (max abs diff < ${exp.tol})`, async () => {
      let r = await model.forward([ref.prompt_ids], KvCache.empty(model.contract));
      assert.equal(r.rows, 1);
      let diff = maxAbsDiff(r.logits, ref.rows[0]);
      assert.ok(diff < exp.tol, `prefill: max abs diff ${diff}`);
      assert.equal(argmax(r.logits), ref.greedy_tokens[0]);
      for (let step = 1; step <= ref.n_decode; step++) {
        r = await model.forward([[ref.greedy_tokens[step - 1]]], r.cache);
        diff = maxAbsDiff(r.logits, ref.rows[step]);
        assert.ok(diff < exp.tol, `decode step ${step}: max abs diff ${diff}`);
        assert.equal(argmax(r.logits), ref.greedy_tokens[step], `greedy token at step ${step}`);
      }
      assert.equal(r.cache.length, ref.prompt_ids.length + ref.n_decode);
      assert.ok(r.cache instanceof KvCache);
      assert.equal(r.cache.tensors[0].type, exp.kvType);
    });

    test('logits are the same after a cropped cache plus chunked prefill as after a fresh prefill', async () => {
      const ids = ref.prompt_ids;
      const fresh = await model.forward([ids], KvCache.empty(model.contract));
      const other = await model.forward([ids.slice(0, 12).concat([40, 41, 42, 43, 44])], KvCache.empty(model.contract));
      let cache = other.cache.crop(12);
      assert.equal(cache.length, 12);
      let last = fresh.logits;
      for (let at = 12; at < ids.length; at += 7) {
        const r = await model.forward([ids.slice(at, at + 7)], cache);
        cache = r.cache;
        last = r.logits;
      }
      assert.equal(cache.length, ids.length);
      const diff = maxAbsDiff(last, fresh.logits);
      assert.ok(diff < exp.tol, `max abs diff ${diff}`);
    });

    test('the engine generates the reference greedy tokens', async () => {
      engine.resetCache();
      const r = await engine.generate(promptText(), { maxNewTokens: ref.n_decode });
      assert.equal(r.stats.promptTokens, ref.prompt_ids.length);
      assert.deepEqual(r.tokens, ref.greedy_tokens.slice(0, ref.n_decode));
    });

    test('greedy output is the same with the reused KV cache and after resetCache()', async () => {
      const base = promptText();
      const prompts = [base, `${base}x`, `${base}x = 1\n`, base.slice(0, Math.floor(base.length * 0.6)), base];
      let reused = 0;
      for (const p of prompts) {
        const warm = await engine.generate(p, { maxNewTokens: 12 });
        reused += warm.stats.reusedTokens;
        engine.resetCache();
        const cold = await engine.generate(p, { maxNewTokens: 12 });
        assert.equal(cold.stats.reusedTokens, 0);
        assert.deepEqual(warm.tokens, cold.tokens, `prompt ${JSON.stringify(p.slice(-20))}`);
        assert.equal(warm.text, cold.text);
      }
      assert.ok(reused > 0, 'the warm runs reused some of the cache');
    });

    test(`pickFimTemplate picks the ${exp.fimFamily} template from the tokenizer's special tokens`, () => {
      const t = pickFimTemplate(engine.info.specialTokens);
      assert.ok(t, 'a template');
      assert.equal(t.family, exp.fimFamily);
      assert.equal(typeof t.fileHeader, exp.fileHeader ? 'function' : 'undefined');
      // The markers of the template are single special tokens of this tokenizer.
      const ids = engine.tokenize(t.fim('a', 'b'));
      const specialIds = new Set(Object.values(engine.info.specialTokens));
      specialIds.delete(bosId() ?? -1);
      assert.equal(ids.filter((id) => specialIds.has(id)).length, 3);
      if (t.fileHeader) {
        const header = engine.tokenize(t.fileHeader('src/a.py')).filter((id) => id !== bosId());
        assert.ok(specialIds.has(header[0]), 'the file separator is a special token');
      }
      for (const s of t.stopTokens.filter((s) => exp.specials.includes(s))) assert.ok(s in engine.info.specialTokens, s);
    });

    test('document text that spells special tokens stays text: only the template makes special tokens', () => {
      const t = pickFimTemplate(engine.info.specialTokens)!;
      const added = new Set(Object.values(engine.info.specialTokens));
      for (const s of Object.keys(engine.info.specialTokens)) {
        const doc = `s = "${s}"\nx = `;
        const ids = engine.tokenize(t.fim(doc, `\n${s}\n`));
        // Exactly the template's three markers (plus a BOS the post-processor may add) are added tokens.
        const markers = ids.filter((id) => added.has(id) && id !== bosId());
        assert.equal(markers.length, 3, `${s}: ${markers.length} added tokens in ${JSON.stringify(ids)}`);
        // The text round-trips: the model sees the characters of the file.
        assert.equal(engine.tokenizer.decode(engine.tokenizer.encodeLiteral(doc)), doc);
      }
      // A raw string prompt (the caller's own template) still parses them.
      const [first] = Object.keys(engine.info.specialTokens);
      assert.ok(engine.tokenize(first).some((id) => added.has(id)));
    });
  });
}
