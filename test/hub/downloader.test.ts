import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { downloadModel, modelDir, INCOMPLETE_MARKER, MANIFEST, type DownloadProgress } from '../../src/hub/downloader';
import { HubError } from '../../src/hub/hubErrors';
import { listRepoFiles, resolveEndpoint } from '../../src/hub/hubClient';
import { listInstalledModels, listPartialDownloads } from '../../src/hub/installedModels';
import { commonFiles, pickModelFiles, type ModelFile } from '../../src/hub/recommended';
import { closedPort, COMMIT, fakeModelFiles, sha256, startFakeHub, type FakeHub } from './fakeHub';

const REPO = 'acme/tiny-coder';
const GATED = 'acme/gated-coder';
const TOKEN = 'hf_secret_token';
const FILES: ModelFile[] = [...commonFiles(), { path: 'onnx/model_quantized.onnx' }];
const model = fakeModelFiles(300_000, 7);
const gatedModel = fakeModelFiles(50_000, 9);

let hub: FakeHub;
let storage: string;

before(async () => {
  hub = await startFakeHub({ [REPO]: { files: model }, [GATED]: { files: gatedModel, token: TOKEN } });
});
after(() => hub.close());
beforeEach(() => {
  storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-hub-'));
  hub.log.length = 0;
  hub.dropAfter.clear();
  hub.corrupt.clear();
  hub.unsized.clear();
  hub.extra.clear();
  hub.throttle = undefined;
  hub.failNext = undefined;
  hub.resolveCache = false;
});

const base = () => ({ endpoint: hub.endpoint, storageDir: storage, retryDelayMs: 10, env: {} });

async function rejectsKind(p: Promise<unknown>, kind: HubError['kind'], re?: RegExp): Promise<HubError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof HubError, `not a HubError: ${e}`);
    assert.equal(e.kind, kind, e.message);
    if (re) assert.match(e.message, re);
    return e;
  }
  assert.fail(`expected a '${kind}' error`);
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

test('downloads a multi-file model through the redirect, verified, with progress', async () => {
  const progress: DownloadProgress[] = [];
  const res = await downloadModel({ ...base(), repo: REPO, files: FILES, progressIntervalMs: 0, onProgress: (p) => progress.push(p) });
  const dir = modelDir(storage, REPO);
  assert.equal(res.dir, dir);
  assert.equal(res.commit, COMMIT);
  assert.equal(path.basename(dir), 'acme--tiny-coder');
  for (const [f, body] of Object.entries(model)) assert.deepEqual(fs.readFileSync(path.join(dir, f)), body, f);
  assert.deepEqual(listFiles(dir), [...Object.keys(model), MANIFEST].sort());
  // sha256 checked for the LFS files (the ONNX file and the big tokenizer.json), not for git-sha1 ones.
  const onnx = res.files.find((f) => f.path === 'onnx/model_quantized.onnx')!;
  assert.equal(onnx.sha256, sha256(model['onnx/model_quantized.onnx']));
  assert.equal(res.files.find((f) => f.path === 'config.json')!.sha256, undefined);
  // The LFS file came from the CDN server (another port), the small ones from the hub.
  assert.ok(hub.log.some((r) => r.server === 'cdn' && r.method === 'GET'));
  assert.ok(hub.log.every((r) => r.server === 'hub' || r.headers.authorization === undefined));
  const last = progress[progress.length - 1];
  const total = Object.values(model).reduce((s, b) => s + b.length, 0);
  assert.equal(last.phase, 'done');
  assert.equal(last.bytes, total);
  assert.equal(last.total, total);
  assert.ok(progress.some((p) => p.phase === 'download' && p.bytes > 0 && p.bytes < total));
  for (const p of progress) assert.ok(p.speed >= 0 && (p.etaSeconds === undefined || p.etaSeconds >= 0));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8'));
  assert.equal(manifest.repo, REPO);
  assert.equal(manifest.commit, COMMIT);
  // Installed, with its size.
  const installed = listInstalledModels(storage);
  assert.equal(installed.length, 1);
  assert.equal(installed[0].repo, REPO);
  assert.deepEqual(installed[0].onnxFiles, ['onnx/model_quantized.onnx']);
  assert.ok(installed[0].sizeBytes >= total);
  // A second run fetches nothing.
  hub.log.length = 0;
  const again = await downloadModel({ ...base(), repo: REPO, files: FILES });
  assert.ok(again.files.every((f) => f.skipped));
  assert.ok(hub.log.every((r) => r.method === 'HEAD'));
});

test('resumes with Range after the connection drops mid-file', async () => {
  hub.dropAfter.set('onnx/model_quantized.onnx', 100_000);
  const res = await downloadModel({ ...base(), repo: REPO, files: FILES });
  const gets = hub.log.filter((r) => r.server === 'cdn' && r.method === 'GET' && r.url.includes(sha256(model['onnx/model_quantized.onnx'])));
  assert.equal(gets.length, 2, 'one cut attempt, one resumed');
  assert.equal(gets[0].headers.range, undefined);
  assert.equal(gets[1].headers.range, 'bytes=100000-');
  const file = path.join(res.dir, 'onnx/model_quantized.onnx');
  assert.equal(sha256(fs.readFileSync(file)), sha256(model['onnx/model_quantized.onnx']));
  assert.ok(!fs.existsSync(`${file}.part`));
});

test("follows the hub's relative redirects for small files (resolve-cache)", async () => {
  hub.resolveCache = true;
  const res = await downloadModel({ ...base(), repo: REPO, files: FILES });
  assert.deepEqual(fs.readFileSync(path.join(res.dir, 'config.json')), model['config.json']);
  assert.ok(hub.log.some((r) => r.method === 'HEAD' && r.url.startsWith('/api/resolve-cache/models/acme/tiny-coder/')));
  assert.ok(hub.log.some((r) => r.method === 'GET' && r.url.startsWith('/api/resolve-cache/models/acme/tiny-coder/')));
});

test('retries a 503 from the hub', async () => {
  hub.failNext = { status: 503, n: 2 };
  const res = await downloadModel({ ...base(), repo: REPO, files: FILES });
  assert.equal(res.files.length, FILES.length);
});

test('cancel mid-download leaves no final file; the next run resumes from the part', async () => {
  hub.throttle = { chunk: 8192, delayMs: 5 };
  const ac = new AbortController();
  const err = await rejectsKind(
    downloadModel({
      ...base(),
      repo: REPO,
      files: FILES,
      signal: ac.signal,
      progressIntervalMs: 0,
      onProgress: (p) => {
        if (p.file === 'onnx/model_quantized.onnx' && p.bytes > 0 && p.phase === 'download' && p.bytes - (p.total! - 300_000) > 50_000) ac.abort();
      },
    }),
    'cancelled',
  );
  assert.match(err.message, /cancelled/);
  const dir = modelDir(storage, REPO);
  const final = path.join(dir, 'onnx/model_quantized.onnx');
  assert.ok(!fs.existsSync(final), 'no final file');
  const partSize = fs.statSync(`${final}.part`).size;
  assert.ok(partSize > 0 && partSize < 300_000, `part of ${partSize} bytes`);
  assert.ok(fs.existsSync(path.join(dir, INCOMPLETE_MARKER)));
  assert.equal(listInstalledModels(storage).length, 0);
  assert.equal(listPartialDownloads(storage).length, 1);
  // Resume.
  hub.throttle = undefined;
  hub.log.length = 0;
  await downloadModel({ ...base(), repo: REPO, files: FILES });
  const get = hub.log.find((r) => r.server === 'cdn' && r.method === 'GET' && r.url.includes(sha256(model['onnx/model_quantized.onnx'])))!;
  assert.equal(get.headers.range, `bytes=${partSize}-`);
  assert.equal(sha256(fs.readFileSync(final)), sha256(model['onnx/model_quantized.onnx']));
  assert.equal(listInstalledModels(storage).length, 1);
});

test('a checksum mismatch removes the file and leaves no part', async () => {
  hub.corrupt.add('onnx/model_quantized.onnx');
  await rejectsKind(downloadModel({ ...base(), repo: REPO, files: FILES }), 'checksum', /SHA-256 mismatch/);
  const final = path.join(modelDir(storage, REPO), 'onnx/model_quantized.onnx');
  assert.ok(!fs.existsSync(final));
  assert.ok(!fs.existsSync(`${final}.part`));
  assert.equal(listInstalledModels(storage).length, 0);
});

test('a gated repo: 401 without a token, 403 with a wrong one, works with the right one', async () => {
  const e401 = await rejectsKind(downloadModel({ ...base(), repo: GATED, files: FILES }), 'unauthorized', /token/);
  assert.match(e401.message, /accept its licence/);
  assert.equal(e401.details.status, 401);
  await rejectsKind(downloadModel({ ...base(), repo: GATED, files: FILES, token: 'hf_wrong' }), 'forbidden', /licence/);
  const res = await downloadModel({ ...base(), repo: GATED, files: FILES, token: TOKEN });
  assert.deepEqual(fs.readFileSync(path.join(res.dir, 'onnx/model_quantized.onnx')), gatedModel['onnx/model_quantized.onnx']);
  // The token went to the hub only, never to the CDN.
  const cdn = hub.log.filter((r) => r.server === 'cdn');
  assert.ok(cdn.length > 0 && cdn.every((r) => r.headers.authorization === undefined));
  assert.ok(hub.log.some((r) => r.server === 'hub' && r.headers.authorization === `Bearer ${TOKEN}`));
});

test('404: an unknown repo and an unknown file', async () => {
  const repoErr = await rejectsKind(downloadModel({ ...base(), repo: 'acme/nope', files: FILES }), 'not_found', /Repository acme\/nope not found/);
  assert.equal(repoErr.details.status, 401); // what the hub says without a token
  await rejectsKind(downloadModel({ ...base(), repo: 'acme/nope', files: FILES, token: 'x' }), 'not_found', /not found/);
  await rejectsKind(downloadModel({ ...base(), repo: REPO, files: [...FILES, { path: 'onnx/model_q4.onnx' }] }), 'not_found', /onnx\/model_q4\.onnx not found/);
  // An optional file may be missing.
  const res = await downloadModel({ ...base(), repo: REPO, files: [...FILES, { path: 'special_tokens_map.json', optional: true }] });
  assert.equal(res.files.length, FILES.length);
  assert.equal(fs.existsSync(modelDir(storage, 'acme/nope')), false);
});

test('offline: a closed port gives a clear error', async () => {
  const port = await closedPort();
  await rejectsKind(downloadModel({ ...base(), endpoint: `http://127.0.0.1:${port}`, repo: REPO, files: FILES }), 'offline', /offline/);
  assert.deepEqual(listFiles(storage), []);
});

test('not enough disk space: nothing is written', async () => {
  const statfs = async () => ({ bavail: 10, bsize: 4096 });
  const err = await rejectsKind(downloadModel({ ...base(), repo: REPO, files: FILES, statfs, reserveBytes: 0 }), 'disk', /Not enough disk space/);
  assert.match(err.message, /needs 30\d\.\d kB/);
  assert.deepEqual(listFiles(storage), []);
  // With room it goes through, and the check counts the real sizes.
  let asked = '';
  await downloadModel({
    ...base(),
    repo: REPO,
    files: FILES,
    reserveBytes: 0,
    statfs: async (d) => {
      asked = d;
      return { bavail: 1000, bsize: 4096 };
    },
  });
  assert.equal(asked, storage);
});

test('invalid repo ids are refused before any request', async () => {
  for (const bad of ['nope', 'a/b/c', '/x', 'a/-b', 'a/b..c', 'a/b--c', '']) {
    await rejectsKind(downloadModel({ ...base(), repo: bad, files: FILES }), 'not_found');
  }
  assert.equal(hub.log.length, 0);
});

test('endpoint: explicit option, then HF_ENDPOINT, then huggingface.co', () => {
  assert.equal(resolveEndpoint(undefined, {}), 'https://huggingface.co');
  assert.equal(resolveEndpoint(undefined, { HF_ENDPOINT: 'https://hf-mirror.example/' }), 'https://hf-mirror.example');
  assert.equal(resolveEndpoint('http://127.0.0.1:9', { HF_ENDPOINT: 'https://hf-mirror.example' }), 'http://127.0.0.1:9');
  assert.throws(() => resolveEndpoint('ftp://x', {}), /only http and https/);
});

test('HF_ENDPOINT is used when no endpoint is given', async () => {
  const res = await downloadModel({ storageDir: storage, env: { HF_ENDPOINT: hub.endpoint }, repo: REPO, files: FILES });
  assert.equal(res.files.length, FILES.length);
});

test('listRepoFiles + pickModelFiles choose the files for an arbitrary repo', async () => {
  const listing = await listRepoFiles(hub.endpoint, REPO, 'main');
  assert.equal(listing.commit, COMMIT);
  const pick = pickModelFiles(listing.files.map((f) => f.rfilename));
  assert.equal(pick.onnx, 'onnx/model_quantized.onnx');
  assert.deepEqual(pick.missing, []);
  await rejectsKind(listRepoFiles(hub.endpoint, GATED, 'main'), 'unauthorized');
  assert.equal((await listRepoFiles(hub.endpoint, GATED, 'main', { token: TOKEN })).files.length, Object.keys(gatedModel).length);
});

const ONNX = 'onnx/model_quantized.onnx';

test('a file whose size no header gives is capped (maxUnsizedBytes): a clear error, the part removed', async () => {
  hub.unsized.add(ONNX);
  await rejectsKind(
    downloadModel({ ...base(), repo: REPO, files: FILES, maxUnsizedBytes: 100_000 }),
    'disk',
    /^onnx\/model_quantized\.onnx: the server gives no size and sent more than 100\.0 kB/,
  );
  const final = path.join(modelDir(storage, REPO), ONNX);
  assert.ok(!fs.existsSync(final) && !fs.existsSync(`${final}.part`));
  // Within the cap it goes through (the total is unknown), checked by its sha256.
  const progress: DownloadProgress[] = [];
  await downloadModel({ ...base(), repo: REPO, files: FILES, maxUnsizedBytes: 300_000, progressIntervalMs: 0, onProgress: (p) => progress.push(p) });
  assert.equal(progress[progress.length - 1].total, undefined);
  assert.equal(sha256(fs.readFileSync(final)), sha256(model[ONNX]));
});

test('free space running out while a file of unknown size streams stops it; the part is kept and resumes', async () => {
  hub.unsized.add(ONNX);
  hub.throttle = { chunk: 16384, delayMs: 1 };
  let calls = 0;
  // Plenty for the check up front, then 50 kB: below the 10 kB reserve plus the next 64 KiB stretch.
  const statfs = async () => ({ bavail: ++calls === 1 ? 1e9 : 50_000, bsize: 1 });
  await rejectsKind(
    downloadModel({ ...base(), repo: REPO, files: FILES, statfs, reserveBytes: 10_000, spaceCheckBytes: 65_536 }),
    'disk',
    /^onnx\/model_quantized\.onnx: the disk is running out of space .*resume/,
  );
  assert.ok(calls >= 2);
  const final = path.join(modelDir(storage, REPO), ONNX);
  const partSize = fs.statSync(`${final}.part`).size;
  assert.ok(partSize >= 65_536 && partSize < 300_000, `part of ${partSize} bytes`);
  hub.throttle = undefined;
  hub.log.length = 0;
  await downloadModel({ ...base(), repo: REPO, files: FILES, statfs: async () => ({ bavail: 1e9, bsize: 1 }) });
  const get = hub.log.find((r) => r.server === 'cdn' && r.method === 'GET')!;
  assert.equal(get.headers.range, `bytes=${partSize}-`);
  assert.equal(sha256(fs.readFileSync(final)), sha256(model[ONNX]));
});

test('a server that sends more than the size it declared is stopped: a clear error, nothing kept', async () => {
  for (const [file, size] of [
    [ONNX, 300_000], // LFS, from the CDN
    ['config.json', model['config.json'].length], // small, from the hub
  ] as const) {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-hub-'));
    hub.extra.clear();
    hub.extra.set(file, 200_000);
    const re = new RegExp(`^${file.replace(/[./]/g, '\\$&')}: the server sent more than the ${size} bytes it announced`);
    await rejectsKind(downloadModel({ ...base(), repo: REPO, files: FILES }), 'checksum', re);
    const final = path.join(modelDir(storage, REPO), file);
    assert.ok(!fs.existsSync(final) && !fs.existsSync(`${final}.part`), file);
  }
});

test('a present file of the right size but other content fails its sha256 and is fetched again', async () => {
  const first = await downloadModel({ ...base(), repo: REPO, files: FILES });
  const final = path.join(first.dir, ONNX);
  const bad = Buffer.from(model[ONNX]);
  bad[1234] ^= 0xff;
  fs.writeFileSync(final, bad);
  hub.log.length = 0;
  const logs: string[] = [];
  const phases: DownloadProgress['phase'][] = [];
  const res = await downloadModel({
    ...base(),
    repo: REPO,
    files: FILES,
    log: (m) => logs.push(m),
    progressIntervalMs: 0,
    onProgress: (p) => phases.push(p.phase),
  });
  assert.equal(sha256(fs.readFileSync(final)), sha256(model[ONNX]));
  assert.equal(res.files.find((f) => f.path === ONNX)!.skipped, undefined);
  assert.ok(res.files.find((f) => f.path === 'tokenizer.json')!.skipped, 'an intact file is still skipped');
  assert.ok(
    logs.some((m) => /^onnx\/model_quantized\.onnx: the file already present does not match its SHA-256 .*downloading it again/.test(m)),
    logs.join('\n'),
  );
  assert.ok(phases.includes('verify'));
  const gets = hub.log.filter((r) => r.method === 'GET').map((r) => decodeURIComponent(r.url));
  assert.ok(gets.length > 0 && gets.every((u) => u.includes(ONNX)), `only the bad file is fetched: ${gets.join(', ')}`);
  // The manifest records hashes the files on disk really have.
  const manifest = JSON.parse(fs.readFileSync(path.join(res.dir, MANIFEST), 'utf8')) as { files: { path: string; sha256?: string }[] };
  for (const f of manifest.files) if (f.sha256) assert.equal(f.sha256, sha256(fs.readFileSync(path.join(res.dir, f.path))), f.path);
});

test('unsafe file paths are refused before any request, with a message naming them', async () => {
  for (const [bad, why] of [
    ['a/../../x', /leaves the repo folder/],
    ['../x', /leaves the repo folder/],
    ['a/..', /".." segment/],
    ['.', /names the repo folder itself/],
    ['./', /names the repo folder itself/],
    ['...', /leaves the repo folder/],
    ['', /empty/],
    ['a//b', /empty or "\." segment/],
    ['a/./b', /empty or "\." segment/],
    ['onnx/', /empty or "\." segment/],
    ['/etc/passwd', /absolute path/],
    ['C:/x', /absolute path/],
    ['c:x', /absolute path/],
    ['a\\..\\x', /backslash/],
    ['x\0y', /NUL/],
    ['x\ny', /control character/],
    // Windows forms, refused on every platform (docs/platforms.md).
    ['..\\x', /backslash/],
    ['C:\\x', /backslash/],
    ['\\\\srv\\share\\x', /backslash/],
    ['//srv/share/x', /absolute path/],
    ['onnx./model.onnx', /ends with "\." or a space/],
    ['onnx /model.onnx', /ends with "\." or a space/],
    ['CON', /device name/],
    ['onnx/nul.onnx', /device name/],
    ['config.json:stream', /character Windows does not allow/],
  ] as const) {
    const e = await rejectsKind(downloadModel({ ...base(), repo: REPO, files: [...FILES, { path: bad }] }), 'not_found', why);
    assert.ok(e.message.startsWith(`Refusing the file path ${JSON.stringify(bad)}: `), e.message);
    assert.equal(e.details.code, 'UnsafePath');
  }
  assert.deepEqual(hub.log, [], 'no request at all, so no token sent anywhere');
  assert.deepEqual(listFiles(storage), []);
});

test('a symlink planted at <file>.part, at the file or at its folder is removed, never written through', {
  skip: process.platform === 'win32' && 'symlinks need privileges on Windows',
}, async () => {
  const dir = modelDir(storage, REPO);
  fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  const rc = path.join(storage, 'bashrc');
  fs.writeFileSync(rc, 'export PS1=untouched\n');
  fs.symlinkSync(rc, path.join(dir, `${ONNX}.part`));
  // The final name of a small file, pointing at an outside file of the same size (would be "present").
  const profile = path.join(storage, 'profile');
  fs.writeFileSync(profile, Buffer.alloc(model['config.json'].length, 0x41));
  fs.symlinkSync(profile, path.join(dir, 'config.json'));
  await downloadModel({ ...base(), repo: REPO, files: FILES });
  assert.equal(fs.readFileSync(rc, 'utf8'), 'export PS1=untouched\n');
  assert.deepEqual(fs.readFileSync(profile), Buffer.alloc(model['config.json'].length, 0x41));
  for (const f of [ONNX, 'config.json']) {
    assert.ok(fs.lstatSync(path.join(dir, f)).isFile(), f);
    assert.deepEqual(fs.readFileSync(path.join(dir, f)), model[f], f);
  }
  // A folder of the model replaced by a symlink to somewhere else.
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-elsewhere-'));
  fs.rmSync(path.join(dir, 'onnx'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(dir, 'onnx'));
  await downloadModel({ ...base(), repo: REPO, files: FILES });
  assert.deepEqual(fs.readdirSync(elsewhere), []);
  assert.ok(fs.lstatSync(path.join(dir, 'onnx')).isDirectory());
  assert.deepEqual(fs.readFileSync(path.join(dir, ONNX)), model[ONNX]);
  fs.rmSync(elsewhere, { recursive: true });
});
