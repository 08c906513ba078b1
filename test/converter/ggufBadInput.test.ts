import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { convertCheckpoint } from '../../src/converter/convert';
import { ConvertError } from '../../src/converter/errors';
import { readGgufHeader } from '../../src/converter/gguf/ggufFile';
import { ROOT } from '../helpers';
import { CHECKPOINTS, tempDir } from './checkpointFixtures';
import { assertNothingLeft } from './refusal';

// Broken and unsupported GGUF files, made by patching a real one (test/fixtures/gguf): each gets one message that
// names the file and what to do, and leaves no model folder behind.
const GOOD = path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf');
const root = tempDir('gguf-bad');
let serial = 0;
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A copy of the good file with `patch` applied to its bytes. */
function patched(patch: (b: Buffer) => void): string {
  const b = Buffer.from(fs.readFileSync(GOOD));
  patch(b);
  const file = path.join(root, `bad-${serial++}.gguf`);
  fs.writeFileSync(file, b);
  return file;
}

/** Where the value of metadata `key` starts (after the key's length, bytes and the u32 value type). */
function valueAt(b: Buffer, key: string): number {
  const k = Buffer.from(key);
  const at = b.indexOf(Buffer.concat([u64(k.length), k]));
  assert.ok(at > 0, `${key} not found`);
  return at + 8 + k.length + 4;
}

/** Where tensor `name`'s ggml type id is in its info (after name, n_dims and the dims). */
function tensorTypeAt(b: Buffer, name: string): number {
  const n = Buffer.from(name);
  const at = b.indexOf(Buffer.concat([u64(n.length), n]));
  assert.ok(at > 0, `${name} not found`);
  const dimsAt = at + 8 + n.length;
  return dimsAt + 4 + 8 * b.readUInt32LE(dimsAt);
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

async function refused(from: string, message: RegExp): Promise<void> {
  const out = path.join(root, `out-${serial++}`);
  await assert.rejects(convertCheckpoint({ from, out }), (err: unknown) => {
    assert.ok(err instanceof ConvertError, String(err));
    assert.ok(err.message.startsWith(`${from}: `) || err.message.startsWith(path.dirname(from)), err.message);
    assert.match(err.message, message);
    return true;
  });
  assertNothingLeft(out);
}

describe('a GGUF file Ghostline cannot convert gets one clear message and leaves nothing behind', () => {
  test('not a GGUF file', () =>
    refused(
      patched((b) => b.write('NOPE', 0)),
      /is not a valid GGUF file: it does not start with "GGUF"/,
    ));

  test('a truncated download', async () => {
    const file = path.join(root, `cut-${serial++}.gguf`);
    fs.writeFileSync(file, fs.readFileSync(GOOD).subarray(0, 300_000));
    await refused(file, /ends at byte \d+ but the file has 300000 bytes \(truncated download\?\)/);
  });

  test('cut inside its header', async () => {
    const file = path.join(root, `head-${serial++}.gguf`);
    fs.writeFileSync(file, fs.readFileSync(GOOD).subarray(0, 5_000));
    await refused(file, /inside its header \(truncated download\?\)|more than the file holds|runs past the end/);
  });

  test('GGUF version 1', () =>
    refused(
      patched((b) => b.writeUInt32LE(1, 4)),
      /GGUF version 1 file \(2023\): re-download it/,
    ));

  test('an array that claims more elements than the file holds (no allocation for it)', () =>
    refused(
      patched((b) => b.writeBigUInt64LE(BigInt(15_000_000), valueAt(b, 'tokenizer.ggml.merges') + 4)),
      /tokenizer\.ggml\.merges claims 15000000 elements, more than the file holds/,
    ));

  test('a tensor in a format Ghostline does not read (Q2_K) names the files that work', () =>
    refused(
      patched((b) => b.writeUInt32LE(10, tensorTypeAt(b, 'blk.0.attn_q.weight'))),
      /tensor "blk\.0\.attn_q\.weight" is stored as Q2_K, which Ghostline does not read: pick the repo's Q8_0, F16/,
    ));

  test('an architecture the converter does not build', () =>
    refused(
      patched((b) => b.write('gemma', valueAt(b, 'general.architecture') + 8)),
      /holds a "gemma" model; Ghostline converts GGUF files of qwen2/,
    ));

  test("a pre-tokenizer preset Ghostline does not know: the way out is the model's own tokenizer.json", () =>
    refused(
      patched((b) => b.write('qwenX', valueAt(b, 'tokenizer.ggml.pre') + 8)),
      /its pre-tokenizer is llama\.cpp's "qwenX", which Ghostline does not know .*put the model's own tokenizer\.json .* beside the \.gguf file/,
    ));

  test('a vocabulary that is not byte-level BPE', () =>
    refused(
      patched((b) => b.write('t5', valueAt(b, 'tokenizer.ggml.model') + 8)),
      /its vocabulary is of type "t5t2" \(not byte-level BPE\), which Ghostline cannot rebuild from a GGUF: put the model's own tokenizer\.json/,
    ));

  test('a weight with a NaN (a corrupt file) is named', () =>
    refused(
      patched((b) => {
        // blk.0.attn_norm.weight is F32: its first value becomes a NaN.
        b.writeFloatLE(Number.NaN, readGgufHeader(GOOD).tensors.get('blk.0.attn_norm.weight')!.offset);
      }),
      /tensor "model\.layers\.0\.input_layernorm\.weight" holds a non-finite value/,
    ));

  test('a folder with two .gguf files asks which one', async () => {
    const dir = path.join(root, `two-${serial++}`);
    fs.mkdirSync(dir);
    fs.copyFileSync(GOOD, path.join(dir, 'a.gguf'));
    fs.copyFileSync(GOOD, path.join(dir, 'b.gguf'));
    const out = path.join(root, `out-${serial++}`);
    await assert.rejects(convertCheckpoint({ from: dir, out }), /holds 2 \.gguf files \(a\.gguf, b\.gguf\): name the one to convert/);
    assertNothingLeft(out);
  });
});

test("a qwen2 file that names no pre-tokenizer (written before llama.cpp had presets) gets Qwen's", async () => {
  const file = patched((b) => {
    const key = Buffer.from('tokenizer.ggml.pre');
    b.write('tokenizer.ggml.prX', b.indexOf(key)); // the key is gone; its value stays as metadata nobody reads
  });
  const out = path.join(root, `out-${serial++}`);
  await convertCheckpoint({ from: file, out, quant: 'int8' });
  const tokenizer = JSON.parse(fs.readFileSync(path.join(out, 'tokenizer.json'), 'utf8'));
  const original = JSON.parse(fs.readFileSync(path.join(CHECKPOINTS, 'qwen2', 'tokenizer.json'), 'utf8'));
  assert.deepEqual(tokenizer.pre_tokenizer, original.pre_tokenizer);
});

test("a tokenizer.json beside the .gguf file is the model folder's tokenizer, byte for byte", async () => {
  const dir = path.join(root, `beside-${serial++}`);
  fs.mkdirSync(dir);
  fs.copyFileSync(GOOD, path.join(dir, 'model.gguf'));
  fs.copyFileSync(path.join(CHECKPOINTS, 'qwen2', 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  const out = path.join(root, `out-${serial++}`);
  await convertCheckpoint({ from: dir, out, quant: 'int8' });
  assert.deepEqual(fs.readFileSync(path.join(out, 'tokenizer.json')), fs.readFileSync(path.join(dir, 'tokenizer.json')));
  const gen = JSON.parse(fs.readFileSync(path.join(out, 'generation_config.json'), 'utf8'));
  assert.equal(gen.eos_token_id, 487);
});

test('ghostline convert --from FILE.gguf writes a model folder; a broken one exits non-zero with the message', () => {
  const CLI = path.join(ROOT, 'dist', 'cli.js');
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it with node esbuild.js`);
  const out = path.join(root, `cli-${serial++}`);
  const ok = spawnSync(process.execPath, [CLI, 'convert', '--from', GOOD, '--out', out, '--quant', 'int8'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(fs.existsSync(path.join(out, 'onnx', 'model_int8.onnx')));
  assert.ok(fs.existsSync(path.join(out, 'tokenizer.json')));
  const bad = patched((b) => b.writeUInt32LE(1, 4));
  const out2 = path.join(root, `cli-${serial++}`);
  const r = spawnSync(process.execPath, [CLI, 'convert', '--from', bad, '--out', out2], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /GGUF version 1 file/);
  assertNothingLeft(out2);
});
