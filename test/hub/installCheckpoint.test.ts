import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type { ConvertOptions, ConvertResult } from '../../src/converter/types';
import { childProcessConverter } from '../../src/hub/childProcessConverter';
import { checkpointDir, convertingDir, listCheckpoints, removeCheckpoint } from '../../src/hub/checkpointStore';
import { MANIFEST, modelDir } from '../../src/hub/downloader';
import { HubError } from '../../src/hub/hubErrors';
import { listInstalledModels, listPartialDownloads } from '../../src/hub/installedModels';
import { ConvertFailedError, installCheckpoint, NO_SAFETENSORS, type InstallProgress } from '../../src/hub/installCheckpoint';
import { ShardIndexError, shardNamesFromIndex } from '../../src/hub/shardIndex';
import { ROOT } from '../helpers';
import { fakeCheckpointFiles, filesFromFolder, startFakeHub, type FakeHub } from './fakeHub';

const SINGLE = 'acme/coder-base';
const SHARDED = 'acme/coder-sharded';
const BIG = 'acme/coder-big';
const PT_ONLY = 'acme/pytorch-only';
const DOTDOT = 'acme/bad-index-dotdot';
const ABSOLUTE = 'acme/bad-index-absolute';
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'checkpoints');

let hub: FakeHub;
let storage: string;

before(async () => {
  const ptOnly = fakeCheckpointFiles();
  ptOnly['pytorch_model.bin'] = ptOnly['model.safetensors'];
  delete ptOnly['model.safetensors'];
  const sharded = fakeCheckpointFiles({ shards: 2, seed: 21 });
  sharded['model-old.safetensors'] = Buffer.alloc(5000, 7); // in the repo, not in the index: never fetched
  hub = await startFakeHub({
    [SINGLE]: { files: fakeCheckpointFiles() },
    [SHARDED]: { files: sharded },
    [BIG]: { files: fakeCheckpointFiles({ floats: 200_000, seed: 31 }) },
    [PT_ONLY]: { files: ptOnly },
    [DOTDOT]: { files: fakeCheckpointFiles({ shards: 1, weightMap: { 'model.norm.weight': '../x.safetensors' } }) },
    [ABSOLUTE]: { files: fakeCheckpointFiles({ shards: 1, weightMap: { 'model.norm.weight': '/etc/x.safetensors' } }) },
  });
});
after(() => hub.close());
beforeEach(() => {
  storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-ckpt-'));
  hub.log.length = 0;
  hub.throttle = undefined;
});

const base = () => ({ endpoint: hub.endpoint, storageDir: storage, retryDelayMs: 10, env: {}, progressIntervalMs: 0 });

interface FakeConverter {
  calls: ConvertOptions[];
  convert: (o: ConvertOptions) => Promise<ConvertResult>;
}

/** Writes a plausible model folder (config + onnx, no tokenizer: the flow copies it) into `out`. */
function fakeConverter(during?: (o: ConvertOptions) => void | Promise<void>): FakeConverter {
  const calls: ConvertOptions[] = [];
  return {
    calls,
    convert: async (o) => {
      calls.push(o);
      fs.mkdirSync(path.join(o.out, 'onnx'), { recursive: true });
      fs.copyFileSync(path.join(o.from, 'config.json'), path.join(o.out, 'config.json'));
      fs.writeFileSync(path.join(o.out, 'onnx', 'model_q4.onnx'), Buffer.alloc(1000, 1));
      o.onProgress?.({ doneBytes: 50, totalBytes: 100, tensor: 'model.embed_tokens.weight' });
      await during?.(o);
      fs.writeFileSync(path.join(o.out, 'onnx', 'model_q4.onnx_data'), Buffer.alloc(3000, 2));
      o.onProgress?.({ doneBytes: 100, totalBytes: 100, tensor: 'lm_head.weight' });
      return { out: o.out, onnxFile: path.join(o.out, 'onnx', 'model_q4.onnx'), bytes: 4000, seconds: 0.1, modelType: 'qwen2', quant: o.quant ?? 'q4' };
    },
  };
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

async function rejects<T extends Error>(p: Promise<unknown>, cls: new (...a: never[]) => T, re: RegExp): Promise<T> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${(e as Error)?.stack ?? e}`);
    assert.match((e as Error).message, re);
    return e as T;
  }
  assert.fail(`expected ${cls.name}`);
}

/** Nothing in models/: neither installed nor listed as a resumable download. */
function assertNothingListed(): void {
  assert.deepEqual(listInstalledModels(storage), []);
  assert.deepEqual(listPartialDownloads(storage), []);
}

test('a single-file checkpoint: downloaded apart, converted, only the converted folder listed', async () => {
  const stages: InstallProgress['stage'][] = [];
  const conv = fakeConverter(() => {
    // Half-way through the conversion nothing is listed.
    assertNothingListed();
  });
  const res = await installCheckpoint({ ...base(), repo: SINGLE, convert: conv.convert, onProgress: (p) => stages.push(p.stage) });

  assert.equal(conv.calls.length, 1);
  const ck = checkpointDir(storage, SINGLE);
  assert.equal(conv.calls[0].from, ck);
  assert.ok(conv.calls[0].out.startsWith(convertingDir(storage, SINGLE) + path.sep), conv.calls[0].out);
  assert.deepEqual(filesUnder(ck), ['config.json', 'generation_config.json', MANIFEST, 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);

  assert.equal(res.dir, modelDir(storage, SINGLE));
  assert.equal(res.reused, false);
  assert.equal(res.checkpointDir, ck);
  assert.ok(res.checkpointBytes > 80_000);
  const installed = listInstalledModels(storage);
  assert.deepEqual(
    installed.map((m) => [m.repo, m.dir, m.onnxFiles, m.converted]),
    [[SINGLE, res.dir, ['onnx/model_q4.onnx'], true]],
  );
  assert.deepEqual(filesUnder(res.dir), [
    'config.json',
    'generation_config.json',
    MANIFEST,
    'onnx/model_q4.onnx',
    'onnx/model_q4.onnx_data',
    'tokenizer.json',
    'tokenizer_config.json',
  ]);
  const manifest = JSON.parse(fs.readFileSync(path.join(res.dir, MANIFEST), 'utf8'));
  assert.equal(manifest.repo, SINGLE);
  assert.deepEqual(manifest.converted, { from: 'safetensors', quant: 'q4', modelType: 'qwen2', seconds: 0.1 });
  assert.deepEqual(listPartialDownloads(storage), [], 'the checkpoint is not a partial model download');
  assert.ok(!fs.existsSync(convertingDir(storage, SINGLE)), 'scratch folder removed');
  assert.deepEqual(
    listCheckpoints(storage).map((c) => [c.repo, c.complete]),
    [[SINGLE, true]],
  );

  // Stages in order: the file list, the weights, the conversion.
  const order = stages.filter((s, i) => s !== stages[i - 1]);
  assert.deepEqual(order, ['resolve', 'download', 'convert']);

  // Asking again: the converted model is reused, nothing is downloaded or converted.
  hub.log.length = 0;
  const again = await installCheckpoint({ ...base(), repo: SINGLE, convert: conv.convert });
  assert.equal(again.reused, true);
  assert.equal(again.dir, res.dir);
  assert.equal(conv.calls.length, 1);
  assert.equal(hub.log.length, 0);

  // The checkpoint can be deleted; the model stays.
  await assert.rejects(removeCheckpoint(storage, res.dir), /not a downloaded checkpoint/);
  await removeCheckpoint(storage, ck);
  assert.ok(!fs.existsSync(ck));
  assert.equal(listInstalledModels(storage).length, 1);
});

test('a sharded checkpoint: the shard names come from the index, other files are not fetched', async () => {
  const conv = fakeConverter();
  const res = await installCheckpoint({ ...base(), repo: SHARDED, convert: conv.convert });
  const ck = checkpointDir(storage, SHARDED);
  assert.deepEqual(filesUnder(ck), [
    'config.json',
    'generation_config.json',
    MANIFEST,
    'model-00001-of-00002.safetensors',
    'model-00002-of-00002.safetensors',
    'model.safetensors.index.json',
    'tokenizer.json',
    'tokenizer_config.json',
  ]);
  const asked = hub.log.map((r) => decodeURIComponent(r.url));
  assert.ok(!asked.some((u) => u.includes('model-old.safetensors')), 'a file outside the index is not fetched');
  assert.ok(!asked.some((u) => /\/resolve\/[^/]+\/model\.safetensors$/.test(u)), 'no single-file request when the index exists');
  assert.equal(listInstalledModels(storage)[0].dir, res.dir);
});

test('shard names from an index: sorted, deduplicated, paths outside the repo refused', () => {
  const idx = (m: Record<string, unknown>) => JSON.stringify({ weight_map: m });
  assert.deepEqual(
    shardNamesFromIndex(
      idx({ a: 'model-00010-of-00010.safetensors', b: 'model-00002-of-00010.safetensors', c: 'model-00002-of-00010.safetensors', d: 'sub/w.safetensors' }),
    ),
    ['model-00002-of-00010.safetensors', 'model-00010-of-00010.safetensors', 'sub/w.safetensors'],
  );
  for (const [bad, why] of [
    ['../x.safetensors', /leaves the repo/],
    ['a/../../x.safetensors', /leaves the repo/],
    ['/etc/x.safetensors', /absolute path/],
    ['C:/x.safetensors', /absolute path/],
    ['..\\x.safetensors', /backslash/],
    ['x.bin', /not a \.safetensors file/],
    ['', /empty/],
  ] as const) {
    assert.throws(
      () => shardNamesFromIndex(idx({ w: bad }), 'acme/x'),
      (e: Error) => e instanceof ShardIndexError && why.test(e.message) && e.message.includes('acme/x'),
      bad,
    );
  }
  assert.throws(() => shardNamesFromIndex('{', 'acme/x'), /not valid JSON/);
  assert.throws(() => shardNamesFromIndex('{"metadata":{}}'), /no "weight_map"/);
  assert.throws(() => shardNamesFromIndex(idx({ w: 3 })), /not a file name/);
  assert.throws(() => shardNamesFromIndex(idx({})), /names no shard/);
});

test('an index naming "../x" or an absolute path: a clear error before any shard is fetched', async () => {
  for (const [repo, re] of [
    [DOTDOT, /refusing shard "\.\.\/x\.safetensors".*leaves the repo/],
    [ABSOLUTE, /refusing shard "\/etc\/x\.safetensors".*absolute path/],
  ] as const) {
    const conv = fakeConverter();
    await rejects(installCheckpoint({ ...base(), repo, convert: conv.convert }), ShardIndexError, re);
    assert.equal(conv.calls.length, 0);
    assert.ok(!hub.log.some((r) => /x\.safetensors/.test(decodeURIComponent(r.url))), 'the bad shard is never requested');
    assertNothingListed();
    assert.ok(!fs.existsSync(path.join(storage, 'x.safetensors')) && !fs.existsSync(path.join(storage, 'checkpoints', 'x.safetensors')));
  }
});

test('a repo without safetensors weights gets the clear message', async () => {
  const conv = fakeConverter();
  const e = await rejects(
    installCheckpoint({ ...base(), repo: PT_ONLY, convert: conv.convert }),
    HubError,
    /this repo has no safetensors weights; Ghostline converts only safetensors/,
  );
  assert.ok(e.message.includes(NO_SAFETENSORS));
  assert.equal(e.kind, 'not_found');
  assert.equal(e.details.code, 'NoSafetensors');
  assert.equal(conv.calls.length, 0);
  assert.ok(!hub.log.some((r) => r.url.includes('pytorch_model.bin')));
  assertNothingListed();
});

test('a missing repo is still reported as a missing repo', async () => {
  const e = await rejects(installCheckpoint({ ...base(), repo: 'acme/nope', convert: fakeConverter().convert }), HubError, /not found/);
  assert.equal(e.details.code, 'RepoNotFound');
});

test('cancel during the download: nothing listed; the next run resumes and converts', async () => {
  hub.throttle = { chunk: 8192, delayMs: 5 };
  const ac = new AbortController();
  const conv = fakeConverter();
  const err = await rejects(
    installCheckpoint({
      ...base(),
      repo: BIG,
      convert: conv.convert,
      signal: ac.signal,
      onProgress: (p) => {
        if (p.stage === 'download' && p.download.file === 'model.safetensors' && p.download.bytes > 150_000) ac.abort();
      },
    }),
    HubError,
    /cancelled/,
  );
  assert.equal(err.kind, 'cancelled');
  assert.equal(conv.calls.length, 0);
  assertNothingListed();
  assert.deepEqual(
    listCheckpoints(storage).map((c) => [c.repo, c.complete]),
    [[BIG, false]],
  );
  assert.ok(fs.existsSync(path.join(checkpointDir(storage, BIG), 'model.safetensors.part')));

  hub.throttle = undefined;
  hub.log.length = 0;
  const res = await installCheckpoint({ ...base(), repo: BIG, convert: conv.convert });
  assert.ok(
    hub.log.some((r) => r.server === 'cdn' && /^bytes=[1-9]\d*-$/.test(String(r.headers.range))),
    'resumed with a Range request',
  );
  assert.deepEqual(
    listInstalledModels(storage).map((m) => m.dir),
    [res.dir],
  );
});

test('a failed or cancelled conversion leaves nothing listed and keeps the checkpoint', async () => {
  const failing = fakeConverter(() => {
    throw new Error('unsupported model_type "mamba"');
  });
  const e = await rejects(
    installCheckpoint({ ...base(), repo: SINGLE, convert: failing.convert }),
    ConvertFailedError,
    /Converting acme\/coder-base failed: unsupported model_type "mamba"\. The checkpoint is kept/,
  );
  assert.equal(e.checkpointDir, checkpointDir(storage, SINGLE));
  assertNothingListed();
  assert.ok(!fs.existsSync(convertingDir(storage, SINGLE)));
  assert.deepEqual(
    listCheckpoints(storage).map((c) => c.complete),
    [true],
  );

  const ac = new AbortController();
  const cancelled = fakeConverter(() => ac.abort()); // a converter that finishes anyway: the result is still dropped
  hub.log.length = 0;
  const c = await rejects(
    installCheckpoint({ ...base(), repo: SINGLE, convert: cancelled.convert, signal: ac.signal }),
    HubError,
    /Conversion of acme\/coder-base cancelled/,
  );
  assert.equal(c.details.code, 'ConvertCancelled');
  assert.ok(!hub.log.some((r) => r.server === 'cdn' && r.method === 'GET'), 'the kept checkpoint was not downloaded again');
  assertNothingListed();
  assert.ok(!fs.existsSync(convertingDir(storage, SINGLE)));
});

test('a leftover folder that is the model in use is refused before any download, and kept', async () => {
  const out = modelDir(storage, SINGLE);
  fs.mkdirSync(path.join(out, 'onnx'), { recursive: true });
  fs.writeFileSync(path.join(out, 'onnx', 'model.onnx'), 'loaded'); // no config.json: not an installed model
  const conv = fakeConverter();
  await rejects(
    installCheckpoint({ ...base(), repo: SINGLE, convert: conv.convert, inUse: (d) => d.toLowerCase() === out.toLowerCase() }),
    ConvertFailedError,
    /is the model in use and would be replaced: select another model/,
  );
  assert.equal(hub.log.length, 0);
  assert.equal(conv.calls.length, 0);
  assert.equal(fs.readFileSync(path.join(out, 'onnx', 'model.onnx'), 'utf8'), 'loaded');
  // Not in use: the leftover is replaced whole by the converted folder.
  const res = await installCheckpoint({ ...base(), repo: SINGLE, convert: conv.convert, inUse: () => false });
  assert.ok(!fs.existsSync(path.join(res.dir, 'onnx', 'model.onnx')));
  assert.ok(fs.existsSync(path.join(res.dir, 'onnx', 'model_q4.onnx')));
  assert.deepEqual(
    fs.readdirSync(path.dirname(out)).filter((n) => n.includes('.tmp-old-')),
    [],
    'the replaced leftover is deleted',
  );
});

// qwen2 (one model.safetensors) through the extension's converter, the CLI in a child process; llama (sharded,
// with an index) through the converter in this process.
for (const [fixture, how] of [
  ['qwen2', 'child process'],
  ['llama', 'in process'],
] as const) {
  test(`end to end with the real converter (${how}): the ${fixture} fixture checkpoint becomes a listed q4 model`, async () => {
    const convertCheckpoint =
      how === 'child process'
        ? childProcessConverter(path.join(ROOT, 'out', 'src', 'cli', 'main.js'))
        : (await import('../../src/converter/convert')).convertCheckpoint;
    const dir = path.join(FIXTURES, fixture);
    const repo = `acme/${fixture}-fixture`;
    hub.repos.set(repo, { files: filesFromFolder(dir) });
    const res = await installCheckpoint({ ...base(), repo, convert: convertCheckpoint });
    const sharded = fs.existsSync(path.join(dir, 'model.safetensors.index.json'));
    const weights = filesUnder(checkpointDir(storage, repo)).filter((f) => f.endsWith('.safetensors'));
    assert.deepEqual(
      weights,
      Object.keys(filesFromFolder(dir))
        .filter((f) => f.endsWith('.safetensors'))
        .sort(),
      sharded ? 'every shard of the index' : 'the single file',
    );
    const [m] = listInstalledModels(storage);
    assert.equal(m.dir, res.dir);
    assert.ok(m.onnxFiles.includes('onnx/model_q4.onnx'), m.onnxFiles.join(', '));
    for (const f of ['config.json', 'tokenizer.json']) assert.ok(fs.existsSync(path.join(res.dir, f)), f);
    assert.ok(!fs.existsSync(convertingDir(storage, repo)));
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(path.join(res.dir, 'onnx', 'model_q4.onnx'));
    assert.ok(session.outputNames.includes('logits'), session.outputNames.join(', '));
    await session.release();
  });
}

// A repo that publishes only a GGUF file (Sweep's next-edit models): that file is fetched, nothing else is asked for
// but the optional tokenizer files, and the real converter turns it into a listed model.
test('a GGUF repo: the one .gguf file is downloaded and converted; the tokenizer comes from its metadata', async () => {
  const { convertCheckpoint } = await import('../../src/converter/convert');
  const repo = 'acme/next-edit-gguf';
  const gguf = path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf');
  hub.repos.set(repo, { files: { 'model.q8_0.gguf': fs.readFileSync(gguf), 'model.f16.gguf': Buffer.alloc(100, 1), 'README.md': Buffer.from('# card\n') } });
  const res = await installCheckpoint({ ...base(), repo, gguf: 'model.q8_0.gguf', convert: convertCheckpoint });
  assert.deepEqual(
    filesUnder(checkpointDir(storage, repo)).filter((f) => !f.startsWith('.') && f !== MANIFEST),
    ['model.q8_0.gguf'],
  );
  assert.ok(!hub.log.some((r) => r.url.includes('model.f16.gguf') || r.url.includes('README')), 'no other file is fetched');
  const [m] = listInstalledModels(storage);
  assert.equal(m.dir, res.dir);
  assert.ok(m.onnxFiles.includes('onnx/model_q4.onnx'), m.onnxFiles.join(', '));
  const manifest = JSON.parse(fs.readFileSync(path.join(res.dir, MANIFEST), 'utf8'));
  assert.equal(manifest.converted.from, 'gguf');
  const tokenizer = JSON.parse(fs.readFileSync(path.join(res.dir, 'tokenizer.json'), 'utf8'));
  assert.ok(
    tokenizer.added_tokens.some((t: { content: string }) => t.content === '<|file_sep|>'),
    'the rebuilt tokenizer has the next-edit format token',
  );
});

test('a GGUF repo without the named file nor another it can convert: a clear not-found, nothing converted', async () => {
  const repo = 'acme/next-edit-missing';
  hub.repos.set(repo, { files: { 'other.gguf': Buffer.alloc(10) } });
  const conv = fakeConverter();
  const e = await rejects(installCheckpoint({ ...base(), repo, gguf: 'model.q8_0.gguf', convert: conv.convert }), HubError, /model\.q8_0\.gguf/);
  assert.equal(e.kind, 'not_found');
  assert.equal(conv.calls.length, 0);
  assertNothingListed();
});

// The catalog's next-edit file names could not be checked against the hub from here, and a repo may rename its
// files: a missing named file makes the repo's listing choose, by the same rule as a typed GGUF repo.
test('a GGUF repo that renamed the file: its best GGUF is fetched instead, converted, and the log says so', async () => {
  const { convertCheckpoint } = await import('../../src/converter/convert');
  const repo = 'acme/next-edit-renamed';
  const gguf = path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf');
  hub.repos.set(repo, { files: { 'next-edit-v2-Q8_0.gguf': fs.readFileSync(gguf), 'next-edit-v2-IQ2_XS.gguf': Buffer.alloc(100, 1) } });
  const logged: string[] = [];
  const res = await installCheckpoint({ ...base(), repo, gguf: 'model.q8_0.gguf', convert: convertCheckpoint, log: (m) => logged.push(m) });
  assert.ok(fs.existsSync(path.join(res.dir, 'onnx', 'model_q4.onnx')));
  assert.deepEqual(
    logged.filter((m) => /instead/.test(m)),
    [`${repo} has no model.q8_0.gguf: converting its next-edit-v2-Q8_0.gguf instead`],
  );
  assert.ok(!hub.log.some((r) => r.url.includes('IQ2_XS')), 'a format the converter refuses is never fetched');
  assert.equal(JSON.parse(fs.readFileSync(path.join(res.dir, MANIFEST), 'utf8')).converted.from, 'gguf');
});

test('a GGUF kept in a folder of the repo is converted from there', async () => {
  const { convertCheckpoint } = await import('../../src/converter/convert');
  const repo = 'acme/gguf-in-folder';
  const gguf = path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf');
  hub.repos.set(repo, { files: { 'quants/model-Q8_0.gguf': fs.readFileSync(gguf) } });
  const res = await installCheckpoint({ ...base(), repo, gguf: 'quants/model-Q8_0.gguf', convert: convertCheckpoint });
  assert.ok(fs.existsSync(path.join(res.dir, 'onnx', 'model_q4.onnx')));
  assert.ok(fs.existsSync(path.join(res.dir, 'tokenizer.json')));
});
