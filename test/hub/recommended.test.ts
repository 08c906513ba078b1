import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { INCOMPLETE_MARKER } from '../../src/hub/downloader';
import { formatBytes, formatDuration } from '../../src/hub/format';
import { HubError } from '../../src/hub/hubErrors';
import { parseRepoRef, repoIdProblem, resolveUrl } from '../../src/hub/repoRef';
import { sha256FromEtag } from '../../src/hub/responseHeaders';
import { listInstalledModels, listPartialDownloads, removeInstalledModel } from '../../src/hub/installedModels';
import { pickOnnxFile } from '../../src/engine/model/modelFolder';
import { externalDataFiles, findRecommended, ggufFiles, pickGgufFile, pickModelFiles, RECOMMENDED_MODELS, SAFETENSORS_INDEX } from '../../src/hub/recommended';

test('recommended models are well formed', () => {
  assert.ok(RECOMMENDED_MODELS.length >= 3);
  const seen = new Set<string>();
  let statedSizes = 0;
  for (const m of RECOMMENDED_MODELS) {
    // The reference the download command is given parses back to this repo and revision.
    assert.deepEqual(parseRepoRef(`${m.repo}@${m.revision}`), { repo: m.repo, revision: m.revision });
    // findRecommended ignores case: two entries must differ by more than case.
    assert.ok(!seen.has(m.repo.toLowerCase()), `duplicate ${m.repo}`);
    seen.add(m.repo.toLowerCase());
    assert.equal(findRecommended(m.repo.toUpperCase()), m);
    assert.ok(m.revision === 'main' || /^[0-9a-f]{40}$/.test(m.revision), m.revision);
    const paths = m.files.map((f) => f.path);
    assert.equal(new Set(paths).size, paths.length, `${m.repo}: a file listed twice`);
    if (m.gguf) {
      // A GGUF checkpoint: that one file (its config and vocabulary are inside), the repo's tokenizer when it has one.
      assert.equal(m.kind, 'checkpoint');
      assert.match(m.gguf, /^[\w.-]+\.gguf$/, m.repo);
      assert.deepEqual(m.files, ggufFiles(m.gguf));
      assert.match(m.label, /GGUF .*converted/, `${m.repo}: the label says it is a GGUF converted here`);
      continue;
    }
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) assert.ok(paths.includes(f), `${m.repo} ${f}`);
    if (m.kind === 'onnx') {
      // One ONNX file, the one the entry's label names the format of.
      const onnx = paths.filter((p) => p.endsWith('.onnx'));
      assert.equal(onnx.length, 1, m.repo);
      const format = /\((int8|q4)\b/.exec(m.label)?.[1];
      assert.ok(format, `${m.repo}: the label says the format: ${m.label}`);
      assert.match(onnx[0], format === 'q4' ? /_q4\.onnx$/ : /_quantized\.onnx$/, `${m.repo}: ${m.label} downloads ${onnx[0]}`);
    } else {
      // A checkpoint fetches its small files and the optional index first; the weights are resolved then.
      assert.ok(!paths.some((p) => p.endsWith('.onnx') || p.endsWith('.safetensors')), m.repo);
      assert.equal(m.files.find((f) => f.path === SAFETENSORS_INDEX)?.optional, true, m.repo);
      assert.match(m.label, /converted/, `${m.repo}: the label says it is converted here`);
    }
    assert.ok(m.approxBytes > 1e6 && m.license && m.description);
    // A download size the label states is the size the entry declares (within 5%).
    const stated = /([\d.]+) GB\b[^)]*download/.exec(m.label);
    if (stated) statedSizes++;
    if (stated) assert.ok(Math.abs(m.approxBytes / (Number(stated[1]) * 1e9) - 1) < 0.05, `${m.repo}: ${m.label} vs ${m.approxBytes} bytes`);
  }
  assert.ok(statedSizes > 0, 'some label states its download size');
  assert.equal(findRecommended('nobody/nothing'), undefined);
});

/** The model family an entry belongs to: the first word of its label (Qwen2.5-Coder, SmolLM2, ...). */
const family = (m: (typeof RECOMMENDED_MODELS)[number]) => m.label.split(' ')[0];

test('checkpoints come first in the list, the ONNX exports after them; in a family, the smaller download first', () => {
  const kinds = RECOMMENDED_MODELS.map((m) => m.kind);
  const firstOnnx = kinds.indexOf('onnx');
  assert.ok(firstOnnx > 0 && kinds.slice(0, firstOnnx).every((k) => k === 'checkpoint') && kinds.slice(firstOnnx).every((k) => k === 'onnx'), kinds.join(','));
  for (const kind of ['checkpoint', 'onnx'] as const) {
    const entries = RECOMMENDED_MODELS.filter((m) => m.kind === kind);
    for (const [i, m] of entries.entries()) {
      const earlier = entries.slice(0, i).filter((e) => family(e) === family(m));
      for (const e of earlier)
        assert.ok(e.approxBytes < m.approxBytes, `${kind}: ${e.repo} (${e.approxBytes}) before the smaller ${m.repo} (${m.approxBytes})`);
    }
  }
  // The first entry is what a user who picks the top of the list gets: a model trained for fill-in-the-middle,
  // the smallest of those among the checkpoints.
  const first = RECOMMENDED_MODELS[0];
  assert.ok(first.fim);
  const fimCheckpoints = RECOMMENDED_MODELS.filter((m) => m.kind === 'checkpoint' && m.fim);
  assert.equal(Math.min(...fimCheckpoints.map((m) => m.approxBytes)), first.approxBytes);
});

test('one license per model family, checkpoint and ONNX export alike', () => {
  const licenses = new Map<string, Set<string>>();
  for (const m of RECOMMENDED_MODELS) licenses.set(family(m), (licenses.get(family(m)) ?? new Set()).add(m.license));
  for (const [name, set] of licenses) assert.equal(set.size, 1, `${name}: ${[...set].join(' | ')}`);
  // A checkpoint and an export of the same model share the first word of their labels, so the rule spans both kinds.
  const checkpointFamilies = new Set(RECOMMENDED_MODELS.filter((m) => m.kind === 'checkpoint').map(family));
  const onnxFamilies = new Set(RECOMMENDED_MODELS.filter((m) => m.kind === 'onnx').map(family));
  assert.ok(
    [...onnxFamilies].some((f) => checkpointFamilies.has(f)),
    `${[...checkpointFamilies]} / ${[...onnxFamilies]}`,
  );
});

test('repo ids and references', () => {
  for (const ok of ['onnx-community/Qwen2.5-Coder-0.5B-Instruct', 'HuggingFaceTB/SmolLM2-135M', 'a/b', 'A_1/x.y-z']) {
    assert.equal(repoIdProblem(ok), undefined, ok);
    assert.deepEqual(parseRepoRef(ok), { repo: ok, revision: 'main' });
  }
  for (const bad of ['', 'gpt2', 'a/b/c', 'a /b', 'a/b c', '.a/b', 'a/b.', 'a/b..c', 'a/b--c', 'a/b.git', 'é/b']) {
    assert.ok(repoIdProblem(bad), bad);
    assert.throws(() => parseRepoRef(bad), HubError, bad);
  }
  assert.deepEqual(parseRepoRef(' acme/x '), { repo: 'acme/x', revision: 'main' });
  assert.deepEqual(parseRepoRef('acme/x@v1.0'), { repo: 'acme/x', revision: 'v1.0' });
  assert.deepEqual(parseRepoRef('https://huggingface.co/acme/x'), { repo: 'acme/x', revision: 'main' });
  assert.deepEqual(parseRepoRef('https://huggingface.co/acme/x/tree/dev'), { repo: 'acme/x', revision: 'dev' });
  assert.throws(() => parseRepoRef('nope'), /owner\/name/);
  assert.equal(resolveUrl('https://huggingface.co/', 'a/b', 'main', 'onnx/model q4.onnx'), 'https://huggingface.co/a/b/resolve/main/onnx/model%20q4.onnx');
});

test('sha256 only from LFS etags', () => {
  const sha = 'a'.repeat(64);
  assert.equal(sha256FromEtag(`"${sha}"`), sha);
  assert.equal(sha256FromEtag(`W/"${sha.toUpperCase()}"`), sha);
  assert.equal(sha256FromEtag(`"${'b'.repeat(40)}"`), undefined);
  assert.equal(sha256FromEtag(undefined), undefined);
});

test('pickModelFiles prefers 4-bit on CPU, fp16 last, and takes external data', () => {
  const all = [
    'config.json',
    'generation_config.json',
    'tokenizer.json',
    'tokenizer_config.json',
    'onnx/model.onnx',
    'onnx/model.onnx_data',
    'onnx/model_fp16.onnx',
    'onnx/model_q4.onnx',
    'onnx/model_quantized.onnx',
  ];
  assert.equal(pickModelFiles(all).onnx, 'onnx/model_q4.onnx');
  assert.equal(pickModelFiles(['config.json', 'tokenizer.json', 'onnx/model_q4f16.onnx', 'onnx/model_quantized.onnx']).onnx, 'onnx/model_quantized.onnx');
  const fp32 = pickModelFiles(all, 'model.onnx');
  assert.deepEqual(
    fp32.files.map((f) => f.path),
    ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx', 'onnx/model.onnx_data'],
  );
  assert.deepEqual(externalDataFiles('onnx/model.onnx', ['onnx/model.onnx_data_10', 'onnx/model.onnx_data', 'onnx/model.onnx_data_2']), [
    'onnx/model.onnx_data',
    'onnx/model.onnx_data_2',
    'onnx/model.onnx_data_10',
  ]);
  const merged = pickModelFiles(['config.json', 'tokenizer.json', 'onnx/decoder_model_merged.onnx', 'onnx/decoder_with_past_model.onnx']);
  assert.equal(merged.onnx, 'onnx/decoder_model_merged.onnx');
  const none = pickModelFiles(['config.json', 'model.safetensors']);
  assert.equal(none.onnx, undefined);
  assert.deepEqual(none.missing, ['tokenizer.json', 'an .onnx file']);
});

test('the downloader and the engine pick the same ONNX file from the same names, at every rank', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-pick-'));
  const onnxDir = path.join(dir, 'onnx');
  fs.mkdirSync(onnxDir);
  for (const n of ['model.onnx', 'model_fp16.onnx', 'model_q4f16.onnx', 'model_quantized.onnx', 'model_q4.onnx', 'decoder_model_merged.onnx']) {
    fs.writeFileSync(path.join(onnxDir, n), '');
  }
  const order: string[] = [];
  try {
    // Take away each pick in turn, so every rank of the list is compared, not only the first.
    while (fs.readdirSync(onnxDir).length > 0) {
      const engine = path.basename(pickOnnxFile(dir));
      const hub = pickModelFiles(['config.json', 'tokenizer.json', ...fs.readdirSync(onnxDir).map((n) => `onnx/${n}`)]).onnx;
      assert.equal(hub, `onnx/${engine}`);
      order.push(engine);
      fs.rmSync(path.join(onnxDir, engine));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(order, ['model_q4.onnx', 'model_quantized.onnx', 'model.onnx', 'decoder_model_merged.onnx', 'model_q4f16.onnx', 'model_fp16.onnx']);
});

test('installed models: complete folders only, with sizes', async () => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-installed-'));
  const mk = (name: string, files: Record<string, number>) => {
    for (const [f, n] of Object.entries(files)) {
      const p = path.join(storage, 'models', name, f);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, Buffer.alloc(n));
    }
  };
  mk('acme--good', { 'config.json': 10, 'tokenizer.json': 20, 'onnx/model_q4.onnx': 1000, 'onnx/model_q4.onnx_data': 500 });
  mk('acme--nomodel', { 'config.json': 10, 'tokenizer.json': 20 });
  mk('acme--partial', { 'config.json': 10, 'tokenizer.json': 20, 'onnx/model.onnx': 5, 'onnx/model.onnx_data.part': 7, [INCOMPLETE_MARKER]: 1 });
  // Folders another tool is still writing (renamed when done), dot-folders, checkpoints and conversions: never listed.
  const whole = { 'config.json': 10, 'tokenizer.json': 20, 'onnx/model_q4.onnx': 1000 };
  for (const tmp of ['acme--good.tmp', 'acme--good.tmp-1234', 'acme--good.partial', 'acme--good~', '.acme--good']) mk(tmp, whole);
  for (const other of ['../checkpoints/acme--ckpt', '../converting/acme--ckpt/model']) mk(other, whole);
  const installed = listInstalledModels(storage);
  assert.deepEqual(
    installed.map((m) => [m.repo, m.sizeBytes, m.onnxFiles]),
    [['acme/good', 1530, ['onnx/model_q4.onnx']]],
  );
  assert.deepEqual(
    listPartialDownloads(storage).map((m) => m.repo),
    ['acme/nomodel', 'acme/partial'],
  );
  assert.deepEqual(listInstalledModels(path.join(storage, 'missing')), []);
  await assert.rejects(removeInstalledModel(storage, os.tmpdir()), /not a downloaded model/);
  await removeInstalledModel(storage, installed[0].dir);
  assert.deepEqual(listInstalledModels(storage), []);
});

test('formatting', () => {
  assert.equal(formatBytes(639_000_000), '639 MB');
  assert.equal(formatBytes(1_580_000_000), '1.58 GB');
  assert.equal(formatDuration(125), '2 min 5 s');
  assert.equal(formatDuration(Infinity), '?');
});

test('pickGgufFile: Q8_0 first, then F16/BF16, the K-quants from the largest; never split files, projectors or formats the converter refuses', () => {
  const repo = [
    'README.md',
    'qwen2.5-coder-1.5b-instruct-q2_k.gguf',
    'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
    'qwen2.5-coder-1.5b-instruct-q5_k_m.gguf',
    'qwen2.5-coder-1.5b-instruct-q8_0.gguf',
    'qwen2.5-coder-1.5b-instruct-fp16-00001-of-00002.gguf',
    'mmproj-model-f16.gguf',
  ];
  assert.equal(pickGgufFile(repo), 'qwen2.5-coder-1.5b-instruct-q8_0.gguf');
  assert.equal(pickGgufFile(repo.filter((f) => !f.includes('q8_0'))), 'qwen2.5-coder-1.5b-instruct-q5_k_m.gguf');
  assert.equal(pickGgufFile(['Model-F16.gguf', 'Model-Q6_K.gguf', 'model.Q4_0.gguf']), 'Model-F16.gguf');
  assert.equal(pickGgufFile(['sweep-next-edit-1.5b.q8_0.v2.gguf']), 'sweep-next-edit-1.5b.q8_0.v2.gguf');
  assert.equal(pickGgufFile(['gguf/model-IQ4_XS.gguf', 'model-Q3_K_L.gguf']), undefined, 'only formats the converter refuses');
  assert.equal(pickGgufFile(['model-00001-of-00003.gguf', 'model.safetensors']), undefined);
});
