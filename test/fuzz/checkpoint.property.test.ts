import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import * as fc from 'fast-check';
import { readArchitecture } from '../../src/converter/architecture';
import { ConvertError } from '../../src/converter/errors';
import { SafetensorsFile } from '../../src/converter/safetensors';
import { fuzzParams } from './fuzzParams';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-fuzz-st-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'model.safetensors');

/** A safetensors file: 8-byte header length (true or lying), a JSON header, data. */
function safetensors(header: string | Uint8Array, declaredLen: number | null, data: Uint8Array): Buffer {
  const h = typeof header === 'string' ? Buffer.from(header) : Buffer.from(header);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(declaredLen ?? h.length));
  return Buffer.concat([len, h, data]);
}

const dtype = fc.constantFrom('F32', 'F16', 'BF16', 'I64', 'U8', 'F8_E4M3', 'x', '');
const dim = fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom(-1, 1.5, 2 ** 53, 1e300, '3'));
const entry = fc.record(
  {
    dtype: fc.oneof(dtype, fc.integer()),
    shape: fc.oneof(fc.array(dim, { maxLength: 3 }), fc.constant(null)),
    data_offsets: fc.oneof(
      fc.tuple(fc.integer({ min: -2, max: 80 }), fc.integer({ min: -2, max: 80 })),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.constant('0,4'),
    ),
  },
  { requiredKeys: [] },
);
const header = fc.oneof(
  fc
    .dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__metadata__', 'model.embed_tokens.weight', '__proto__')), entry, { maxKeys: 4 })
    .map((h) => JSON.stringify(h)),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
);

test('any safetensors file opens or fails with a ConvertError naming the file: never a crash, a hang or a huge allocation', () => {
  fc.assert(
    fc.property(
      fc.oneof(header, fc.uint8Array({ maxLength: 40 })),
      fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 200 }), fc.constantFrom(2 ** 40, 2 ** 53 - 1)),
      fc.uint8Array({ maxLength: 96 }),
      (h, declared, data) => {
        fs.writeFileSync(file, safetensors(h, declared, data));
        try {
          const st = SafetensorsFile.open(file);
          for (const t of st.tensors.values()) {
            // What it accepts is consistent: the tensor's bytes lie inside the file.
            assert.ok(t.offset >= 8 && t.offset + t.bytes <= fs.statSync(file).size);
            if (t.shape[0] > 0 && t.bytes > 0) {
              try {
                st.readRows(t, 0, 1);
              } catch (err) {
                assert.ok(err instanceof ConvertError, String(err));
              }
            }
          }
          st.close();
        } catch (err) {
          assert.ok(err instanceof ConvertError, `not a ConvertError: ${(err as Error)?.stack ?? err}`);
          assert.ok((err as Error).message.includes(file));
        }
      },
    ),
    fuzzParams(3000),
  );
});

// Mostly plausible sizes (so that valid configs occur), sometimes anything.
const value = fc.oneof(
  { arbitrary: fc.constantFrom(1, 2, 4, 8, 16, 64), weight: 12 },
  { arbitrary: fc.oneof(fc.integer({ min: -4, max: 4096 }), fc.double(), fc.constantFrom(null, true, false, 'x', [], {}, 896, 14, 1e6, 2 ** 60)), weight: 1 },
);
const config = fc.record(
  {
    model_type: fc.constantFrom('llama', 'qwen2', 'starcoder2', 'gpt2', '', 'constructor'),
    hidden_size: value,
    num_attention_heads: value,
    num_key_value_heads: value,
    head_dim: value,
    intermediate_size: value,
    num_hidden_layers: value,
    vocab_size: value,
    max_position_embeddings: value,
    rope_theta: value,
    rms_norm_eps: value,
    hidden_act: fc.constantFrom('silu', 'gelu_pytorch_tanh', 'relu', 3),
    tie_word_embeddings: fc.oneof(fc.boolean(), fc.boolean(), value),
    rope_scaling: fc.oneof(
      fc.constant(null),
      fc.record({ rope_type: fc.constantFrom('linear', 'llama3', 'yarn', 'default'), factor: value }, { requiredKeys: [] }),
    ),
  },
  { requiredKeys: ['model_type', 'hidden_size', 'num_attention_heads', 'intermediate_size', 'num_hidden_layers', 'vocab_size'] },
);

test('any config.json gives an architecture with positive integer sizes, or a ConvertError naming config.json', () => {
  let accepted = 0;
  fc.assert(
    fc.property(config, (c) => {
      try {
        const a = readArchitecture(c as Record<string, unknown>, 'config.json');
        accepted++;
        for (const k of ['hidden', 'heads', 'kvHeads', 'headDim', 'layers', 'intermediate', 'maxPositions', 'vocab'] as const) {
          assert.ok(Number.isSafeInteger(a[k]) && a[k] > 0, `${k} = ${a[k]}`);
        }
        assert.equal(a.heads % a.kvHeads, 0);
        assert.ok(a.invFreq.every((f) => Number.isFinite(f) && f > 0));
      } catch (err) {
        assert.ok(err instanceof ConvertError, `not a ConvertError: ${(err as Error)?.stack ?? err}`);
        assert.match((err as Error).message, /config\.json/);
      }
    }),
    fuzzParams(5000),
  );
  assert.ok(accepted > 0, 'some configs were valid');
});
