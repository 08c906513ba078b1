import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { convertCheckpoint, PARTIAL_SUFFIX } from '../../src/converter/convert';
import { ConvertError } from '../../src/converter/errors';
import type { Quant } from '../../src/converter/types';
import { ROOT } from '../helpers';
import { Checkpoint } from '../../src/converter/safetensors';
import { CHECKPOINTS, copyCheckpointMeta, f32Bytes, tempDir, writeSafetensors, type TensorSpec } from './checkpointFixtures';
import { assertNothingLeft, copyFixture as copyFixtureUnder, expectRefused, type Fixture } from './refusal';

/**
 * Issue 12, "Bad input": every broken checkpoint is refused with an error that names the file (and the
 * tensor, where there is one) and says what is wrong, and no half-written model folder is left behind:
 * neither `out` nor `out.converting` exists afterwards.
 */

const root = tempDir('bad-input');
after(() => fs.rmSync(root, { recursive: true, force: true }));
let serial = 0;
const copyFixture = (name: Fixture) => copyFixtureUnder(root, name);

// ---- editing files of the copy ----------------------------------------------------------------------------

interface Entry {
  dtype: unknown;
  shape: unknown;
  data_offsets: [number, number];
}
type Header = Record<string, Entry>;

function readSafetensors(file: string): { header: Header; data: Buffer } {
  const buf = fs.readFileSync(file);
  const len = Number(buf.readBigUInt64LE(0));
  return { header: JSON.parse(buf.subarray(8, 8 + len).toString('utf8')), data: buf.subarray(8 + len) };
}

/** Rewrites the JSON header of a safetensors file (the data bytes stay as they are). */
function patchHeader(file: string, patch: (h: Header) => void): void {
  const { header, data } = readSafetensors(file);
  patch(header);
  writeRawHeader(file, Buffer.from(JSON.stringify(header)), data);
}

function writeRawHeader(file: string, json: Buffer, data: Buffer, declaredLength = json.length): void {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(declaredLength));
  fs.writeFileSync(file, Buffer.concat([len, json, data]));
}

/** Overwrites the first element of a tensor with NaN (whatever its dtype). */
function poison(file: string, tensor: string): void {
  const { header } = readSafetensors(file);
  const e = header[tensor];
  const headerLen = Number(fs.readFileSync(file).readBigUInt64LE(0));
  const nan = e.dtype === 'F32' ? Buffer.from([0, 0, 0xc0, 0x7f]) : e.dtype === 'BF16' ? Buffer.from([0xc0, 0x7f]) : Buffer.from([0x00, 0x7e]);
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, nan, 0, nan.length, 8 + headerLen + e.data_offsets[0]);
  fs.closeSync(fd);
}

/** The tensor whose data ends last in the file. */
function lastTensor(file: string): string {
  const { header } = readSafetensors(file);
  return Object.entries(header)
    .filter(([k]) => k !== '__metadata__')
    .sort((a, b) => b[1].data_offsets[1] - a[1].data_offsets[1])[0][0];
}

// biome-ignore lint/suspicious/noExplicitAny: the tests write any field of any shape into these JSON files
function patchJson(file: string, patch: (j: Record<string, any>) => void): void {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  patch(j);
  fs.writeFileSync(file, JSON.stringify(j, null, 2));
}

const ST = 'model.safetensors';
const Q0 = 'model.layers.0.self_attn.q_proj.weight';
const K0 = 'model.layers.0.self_attn.k_proj.weight';
const DOWN1 = 'model.layers.1.mlp.down_proj.weight';
const EMBED = 'model.embed_tokens.weight';

// ---- the checks ---------------------------------------------------------------------------------------------

interface BadCase {
  name: string;
  fixture?: Fixture;
  quant?: Quant;
  /** Breaks the copy of the checkpoint in `dir`. */
  breakIt: (dir: string) => void;
  /** The file named (relative to the checkpoint folder; '' for the folder itself). */
  file: string;
  tensor?: string;
  says: RegExp;
}

const cases: BadCase[] = [
  // ---- safetensors files that are cut short or whose header lies
  {
    name: 'truncated file (last bytes cut)',
    breakIt: (d) => {
      fs.writeFileSync(path.join(d, ST), fs.readFileSync(path.join(d, ST)).subarray(0, -100));
    },
    file: ST,
    tensor: lastTensor(path.join(CHECKPOINTS, 'qwen2', ST)),
    says: /ends at byte \d+ but the file has \d+ bytes \(truncated/,
  },
  {
    name: 'truncated shard of a sharded checkpoint',
    fixture: 'llama',
    breakIt: (d) => {
      const f = path.join(d, 'model-00002-of-00002.safetensors');
      fs.writeFileSync(f, fs.readFileSync(f).subarray(0, 5000));
    },
    file: 'model-00002-of-00002.safetensors',
    says: /truncated/,
  },
  {
    name: 'file shorter than its 8-byte header length',
    breakIt: (d) => fs.writeFileSync(path.join(d, ST), Buffer.from([1, 2, 3])),
    file: ST,
    says: /not a valid safetensors file: only 3 bytes/,
  },
  {
    name: 'header length larger than the file',
    breakIt: (d) => {
      const f = path.join(d, ST);
      const size = fs.statSync(f).size;
      const fd = fs.openSync(f, 'r+');
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(size * 2));
      fs.writeSync(fd, len, 0, 8, 0);
      fs.closeSync(fd);
    },
    file: ST,
    says: /not a valid safetensors file: header length \d+ does not fit a \d+-byte file/,
  },
  {
    name: 'data_offsets whose span is not dtype size x shape',
    breakIt: (d) =>
      patchHeader(path.join(d, ST), (h) => {
        h[Q0].data_offsets[1] -= 2;
      }),
    file: ST,
    tensor: Q0,
    says: /needs \d+ bytes but its data_offsets span \d+/,
  },
  {
    name: 'data_offsets past the end of the file',
    breakIt: (d) =>
      patchHeader(path.join(d, ST), (h) => {
        h[Q0].data_offsets = [h[Q0].data_offsets[0] + 10_000_000, h[Q0].data_offsets[1] + 10_000_000];
      }),
    file: ST,
    tensor: Q0,
    says: /ends at byte \d+ but the file has \d+ bytes/,
  },
  {
    name: 'data_offsets of two tensors overlapping',
    breakIt: (d) =>
      patchHeader(path.join(d, ST), (h) => {
        const span = h[K0].data_offsets[1] - h[K0].data_offsets[0];
        const at = h[Q0].data_offsets[0];
        h[K0].data_offsets = [at, at + span];
      }),
    file: ST,
    tensor: K0,
    says: /overlap/,
  },
  {
    name: 'data_offsets not numbers',
    breakIt: (d) =>
      patchHeader(path.join(d, ST), (h) => {
        (h[Q0] as unknown as Record<string, unknown>).data_offsets = [-4, 'x'];
      }),
    file: ST,
    tensor: Q0,
    says: /not a valid safetensors file: tensor "[^"]+" has data_offsets \[-4,"x"\]/,
  },
  ...['I8', 'F64', 'Q4_K', 42].map(
    (dtype): BadCase => ({
      name: `dtype ${JSON.stringify(dtype)}`,
      breakIt: (d) =>
        patchHeader(path.join(d, ST), (h) => {
          h[Q0].dtype = dtype;
        }),
      file: ST,
      tensor: Q0,
      says: new RegExp(`has dtype ${JSON.stringify(JSON.stringify(dtype)).slice(1, -1)}; only F32, F16 and BF16 are converted`),
    }),
  ),
  {
    name: 'header that is not JSON',
    breakIt: (d) => writeRawHeader(path.join(d, ST), Buffer.from('{"model.embed_tokens.weight": {"dtype": "BF1'), readSafetensors(path.join(d, ST)).data),
    file: ST,
    says: /not a valid safetensors file: header is not JSON/,
  },
  {
    name: 'header that is JSON but not an object',
    breakIt: (d) => writeRawHeader(path.join(d, ST), Buffer.from('[1, 2, 3]'), readSafetensors(path.join(d, ST)).data),
    file: ST,
    says: /not a valid safetensors file: header is not a JSON object/,
  },

  // ---- weights that disagree with config.json
  {
    name: 'hidden_size in config.json differs from the weights',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.hidden_size = 64;
      }),
    file: ST,
    tensor: EMBED,
    says: /has shape \[512,128\] but config.json implies \[512,64\]/,
  },
  {
    name: 'a q_proj of the wrong shape (same byte count)',
    breakIt: (d) =>
      patchHeader(path.join(d, ST), (h) => {
        h[Q0].shape = [64, 256];
      }),
    file: ST,
    tensor: Q0,
    says: /has shape \[64,256\] but config.json implies \[128,128\]/,
  },
  {
    name: 'num_hidden_layers in config.json larger than the checkpoint',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.num_hidden_layers = 3;
      }),
    file: '',
    tensor: 'model.layers.2.input_layernorm.weight',
    says: /has no tensor/,
  },
  {
    name: 'num_hidden_layers in config.json smaller than the checkpoint (layers would be dropped)',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.num_hidden_layers = 1;
      }),
    file: 'config.json',
    says: /num_hidden_layers 1 .*model\.layers\.1\./,
  },
  {
    name: 'a missing tensor',
    breakIt: (d) => patchHeader(path.join(d, ST), (h) => void delete h[DOWN1]),
    file: '',
    tensor: DOWN1,
    says: /the checkpoint has no tensor/,
  },
  {
    name: 'untied checkpoint without lm_head.weight',
    fixture: 'llama-untied',
    breakIt: (d) => patchHeader(path.join(d, ST), (h) => void delete h['lm_head.weight']),
    file: '',
    tensor: 'lm_head.weight',
    says: /tie_word_embeddings is false but the checkpoint has no/,
  },
  ...(['q4', 'int8', 'fp32'] as const).flatMap((quant): BadCase[] => [
    {
      name: `NaN in a projection weight (${quant})`,
      fixture: 'llama-untied',
      quant,
      breakIt: (d) => poison(path.join(d, ST), Q0),
      file: ST,
      tensor: Q0,
      says: /non-finite value \(NaN or infinity\)/,
    },
    {
      name: `NaN in a norm weight (${quant})`,
      fixture: 'qwen2',
      quant,
      breakIt: (d) => poison(path.join(d, ST), 'model.layers.1.post_attention_layernorm.weight'),
      file: ST,
      tensor: 'model.layers.1.post_attention_layernorm.weight',
      says: /non-finite value \(NaN or infinity\)/,
    },
  ]),

  // ---- tokenizer and config files
  {
    name: 'missing tokenizer.json',
    breakIt: (d) => fs.rmSync(path.join(d, 'tokenizer.json')),
    file: 'tokenizer.json',
    says: /missing/,
  },
  {
    name: 'tokenizer.json without a model/vocab',
    breakIt: (d) => patchJson(path.join(d, 'tokenizer.json'), (t) => void delete t.model.vocab),
    file: 'tokenizer.json',
    says: /has no "model" with a "vocab"/,
  },
  {
    name: 'tokenizer.json that is not JSON',
    breakIt: (d) => fs.writeFileSync(path.join(d, 'tokenizer.json'), '<html>404</html>'),
    file: 'tokenizer.json',
    says: /is not valid JSON/,
  },
  {
    name: 'missing config.json',
    breakIt: (d) => fs.rmSync(path.join(d, 'config.json')),
    file: 'config.json',
    says: /missing/,
  },
  {
    name: 'config.json that is not JSON',
    breakIt: (d) => fs.writeFileSync(path.join(d, 'config.json'), '{"model_type": "qwen2",'),
    file: 'config.json',
    says: /is not valid JSON/,
  },
  ...['gpt2', 'mistral'].map(
    (mt): BadCase => ({
      name: `model_type "${mt}"`,
      breakIt: (d) =>
        patchJson(path.join(d, 'config.json'), (c) => {
          c.model_type = mt;
        }),
      file: 'config.json',
      says: new RegExp(`model_type "${mt}" is not supported: Ghostline converts llama .*qwen2 .*starcoder2`),
    }),
  ),
  {
    name: 'num_attention_heads not dividing hidden_size',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.num_attention_heads = 3;
      }),
    file: 'config.json',
    says: /hidden_size 128 is not a multiple of num_attention_heads 3/,
  },
  {
    name: 'num_key_value_heads not dividing num_attention_heads',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.num_key_value_heads = 3;
      }),
    file: 'config.json',
    says: /num_attention_heads 4 is not a multiple of num_key_value_heads 3/,
  },
  {
    name: 'hidden_size not a positive integer',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.hidden_size = '128';
      }),
    file: 'config.json',
    says: /hidden_size must be a positive integer, got "128"/,
  },
  {
    name: 'rope_scaling type "yarn"',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.rope_scaling = { type: 'yarn', factor: 4 };
      }),
    file: 'config.json',
    says: /rope_scaling type "yarn" is not supported \(default, linear, llama3\)/,
  },
  {
    name: 'hidden_act "relu"',
    breakIt: (d) =>
      patchJson(path.join(d, 'config.json'), (c) => {
        c.hidden_act = 'relu';
      }),
    file: 'config.json',
    says: /hidden_act "relu" is not supported for qwen2/,
  },

  // ---- where the weights are
  {
    name: 'index naming a shard outside the folder',
    fixture: 'llama',
    breakIt: (d) =>
      patchJson(path.join(d, 'model.safetensors.index.json'), (j) => {
        j.weight_map[DOWN1] = '../x.safetensors';
      }),
    file: 'model.safetensors.index.json',
    says: /names a shard "\.\.\/x\.safetensors": shards must be \.safetensors files in the same folder/,
  },
  {
    name: 'index naming a missing shard',
    fixture: 'llama',
    breakIt: (d) => fs.rmSync(path.join(d, 'model-00002-of-00002.safetensors')),
    file: 'model-00002-of-00002.safetensors',
    says: /is listed in the index but missing/,
  },
  {
    name: 'index that is not JSON',
    fixture: 'llama',
    breakIt: (d) => fs.writeFileSync(path.join(d, 'model.safetensors.index.json'), ''),
    file: 'model.safetensors.index.json',
    says: /is not valid JSON/,
  },
  {
    name: 'no safetensors, only a PyTorch pickle',
    breakIt: (d) => fs.renameSync(path.join(d, ST), path.join(d, 'pytorch_model.bin')),
    file: '',
    says: /has no model\.safetensors nor model\.safetensors\.index\.json \(found pytorch_model\.bin: PyTorch pickles are not read/,
  },
];

describe('bad input: a clear error naming the file and tensor, and nothing half-written left', () => {
  for (const c of cases) {
    test(c.name, async (t) => {
      const from = copyFixture(c.fixture ?? 'qwen2');
      c.breakIt(from);
      const out = path.join(root, `out-${serial++}`);
      const err = await expectRefused(from, out, c.quant ?? 'q4', { file: path.join(from, c.file), tensor: c.tensor, says: c.says });
      t.diagnostic(err.message.replace(root, '<tmp>'));
    });
  }

  test('a non-empty out folder is refused and left untouched', async () => {
    const from = copyFixture('qwen2');
    const out = path.join(root, `out-${serial++}`);
    fs.mkdirSync(path.join(out, 'onnx'), { recursive: true });
    fs.writeFileSync(path.join(out, 'notes.txt'), 'mine');
    fs.writeFileSync(path.join(out, 'onnx', 'model_q4.onnx'), 'an older model');
    await assert.rejects(convertCheckpoint({ from, out }), (err: Error) => {
      assert.ok(err instanceof ConvertError && err.message.includes(out), err.message);
      assert.match(err.message, /already exists and is not empty/);
      return true;
    });
    assert.deepEqual(fs.readdirSync(out).sort(), ['notes.txt', 'onnx']);
    assert.equal(fs.readFileSync(path.join(out, 'notes.txt'), 'utf8'), 'mine');
    assert.equal(fs.readFileSync(path.join(out, 'onnx', 'model_q4.onnx'), 'utf8'), 'an older model');
    assert.ok(!fs.existsSync(out + PARTIAL_SUFFIX));
  });

  test('an out path that is a file is refused and left untouched', async () => {
    const from = copyFixture('qwen2');
    const out = path.join(root, `out-${serial++}`);
    fs.writeFileSync(out, 'not a folder');
    await assert.rejects(convertCheckpoint({ from, out }), (err: Error) => {
      assert.ok(err instanceof ConvertError && err.message.includes(out), err.message);
      assert.match(err.message, /exists and is not a folder/);
      return true;
    });
    assert.equal(fs.readFileSync(out, 'utf8'), 'not a folder');
    assert.ok(!fs.existsSync(out + PARTIAL_SUFFIX));
  });

  test('an empty out folder is fine (converted into)', async () => {
    const from = copyFixture('qwen2');
    const out = path.join(root, `out-${serial++}`);
    fs.mkdirSync(out);
    const r = await convertCheckpoint({ from, out });
    assert.ok(fs.existsSync(r.onnxFile));
    assert.ok(!fs.existsSync(out + PARTIAL_SUFFIX));
  });
});

describe('cancel', () => {
  for (const [when, abortNow] of [
    ['after the first progress report', () => true],
    ['after the last progress report (everything read, not yet renamed)', (allRead: boolean) => allRead],
  ] as const) {
    test(`cancel ${when}: "conversion cancelled", nothing left`, async () => {
      const from = copyFixture('qwen2');
      const out = path.join(root, `out-${serial++}`);
      const ac = new AbortController();
      let calls = 0;
      let sawWork = false;
      const p = convertCheckpoint({
        from,
        out,
        signal: ac.signal,
        onProgress: (pr) => {
          calls++;
          sawWork ||= fs.existsSync(out + PARTIAL_SUFFIX);
          if (abortNow(pr.doneBytes >= pr.totalBytes)) ac.abort();
        },
      });
      await assert.rejects(p, (err: Error) => {
        assert.ok(err instanceof ConvertError, err.stack);
        assert.ok(err.message.includes(out), err.message);
        assert.match(err.message, /conversion cancelled/);
        return true;
      });
      assert.ok(calls >= 1);
      assert.ok(sawWork, 'the conversion had started writing');
      assertNothingLeft(out);
    });
  }
});

describe('CLI', () => {
  const CLI = path.join(ROOT, 'dist', 'cli.js');
  test('ghostline convert with a bad folder exits non-zero with the message on stderr', () => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it with node esbuild.js`);
    const from = copyFixture('qwen2');
    patchHeader(path.join(from, ST), (h) => {
      h[Q0].dtype = 'I8';
    });
    const out = path.join(root, `out-${serial++}`);
    const r = spawnSync(process.execPath, [CLI, 'convert', '--from', from, '--out', out], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.ok(r.stderr.includes(`ghostline: ${path.join(from, ST)}: tensor "${Q0}" has dtype "I8"; only F32, F16 and BF16 are converted\n`), r.stderr);
    assert.equal(r.stdout, '');
    assertNothingLeft(out);
  });

  test('ghostline convert of a missing folder exits non-zero', () => {
    const out = path.join(root, `out-${serial++}`);
    const r = spawnSync(process.execPath, [CLI, 'convert', '--from', path.join(root, 'nope'), '--out', out], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /nope: checkpoint folder or GGUF file not found/);
    assertNothingLeft(out);
  });
});

test('a tensor of another dtype that the model does not use (an int buffer) is ignored', async () => {
  const dir = tempDir('extra-dtype');
  const from = path.join(dir, 'ckpt');
  fs.mkdirSync(from);
  copyCheckpointMeta('llama-untied', from);
  const ck = Checkpoint.open(path.join(CHECKPOINTS, 'llama-untied'));
  const tensors: Record<string, TensorSpec> = {};
  for (const t of ck.tensors.values()) tensors[t.name] = { dtype: 'F32', shape: t.shape, data: f32Bytes(Float32Array.from(ck.readAll(t))) };
  ck.close();
  tensors['model.rotary_emb.position_ids'] = { dtype: 'I64', shape: [4], data: new Uint8Array(32) };
  writeSafetensors(path.join(from, 'model.safetensors'), tensors);
  const r = await convertCheckpoint({ from, out: path.join(dir, 'out'), quant: 'fp32' });
  assert.ok(fs.existsSync(r.onnxFile));
  fs.rmSync(dir, { recursive: true, force: true });
});
