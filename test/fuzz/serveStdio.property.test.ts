import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { ROOT, TINY } from '../helpers';
import { FUZZ_SEED, fuzzParams } from './fuzzParams';

const CLI = path.join(ROOT, 'dist', 'cli.js');

/** Request lines: any JSON, requests with plausible and absurd fields, and raw bytes (invalid UTF-8 too). */
const small = fc.oneof(fc.integer({ min: -3, max: 6 }), fc.double(), fc.constantFrom(null, true, 'x', [], {}, 1e308, -0, 4096));
const request = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)),
    prompt: fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.constantFrom('<fim_prefix>a<fim_suffix>b<fim_middle>', '', '\u0000', 'def f(x):\n    return'),
      small,
    ),
    max_new_tokens: fc.oneof(fc.integer({ min: -2, max: 4 }), small),
    temperature: small,
    top_k: small,
    top_p: small,
    min_p: small,
    repetition_penalty: small,
    num_beams: fc.integer({ min: 0, max: 3 }),
    num_return_sequences: fc.integer({ min: 0, max: 3 }),
    stop: fc.oneof(fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), small),
    seed: small,
    token_healing: fc.oneof(fc.boolean(), small),
    ['__proto__']: small,
    constructor: small,
  },
  { requiredKeys: [] },
);
// Mostly valid raw requests, so that the engine really runs on odd prompts and options.
const validRequest = fc.record(
  {
    id: fc.integer(),
    prompt: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 30 })),
    max_new_tokens: fc.integer({ min: 1, max: 4 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    top_k: fc.integer({ min: 0, max: 50 }),
    top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    stop: fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }),
    num_beams: fc.integer({ min: 1, max: 2 }),
    token_healing: fc.boolean(),
  },
  { requiredKeys: ['prompt', 'max_new_tokens'] },
);
const editorRequest = fc.record(
  {
    id: fc.integer(),
    prefix: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constant('def add(a, b):\n    return a'), small),
    suffix: fc.oneof(fc.string({ maxLength: 20 }), small),
    language: fc.oneof(fc.constantFrom('python', 'typescript'), small),
    path: fc.oneof(fc.constantFrom('a.py', '../../etc/passwd', ''), small),
    explicit: fc.oneof(fc.boolean(), small),
  },
  { requiredKeys: ['prefix'] },
);
const validEditorRequest = fc.record({
  id: fc.integer(),
  prefix: fc.string({ unit: 'grapheme', maxLength: 80 }),
  suffix: fc.string({ unit: 'grapheme', maxLength: 30 }),
  language: fc.constantFrom('python', 'typescript', 'go'),
});
const bytes = fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a && x !== 0x0d)));
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const line = fc.oneof(
  { arbitrary: validRequest.map(json), weight: 4 },
  { arbitrary: validEditorRequest.map(json), weight: 3 },
  { arbitrary: request.map(json), weight: 2 },
  { arbitrary: editorRequest.map(json), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json), weight: 1 },
  { arbitrary: bytes, weight: 1 },
);

test('serve-stdio answers every line of any input with one JSON response, in order, and exits cleanly', async () => {
  const { numRuns } = fuzzParams(400);
  const lines = fc.sample(line, { numRuns, seed: FUZZ_SEED });
  const child = spawn(process.execPath, [CLI, 'serve-stdio', '--model', TINY, '--threads', '1'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0, err);
  // Lines that are blank after UTF-8 decoding get no answer (as documented); every other one gets exactly one.
  const expected = lines.filter((l) => l.toString('utf8').trim() !== '').length;
  const responses =
    out.trim() === ''
      ? []
      : out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
  assert.equal(responses.length, expected);
  for (const r of responses) {
    assert.ok(typeof r === 'object' && r !== null && 'finish_reason' in r, JSON.stringify(r));
    if (r.finish_reason === 'error') assert.ok(typeof r.error === 'string' && r.error.length > 0 && !/\[object Object\]|undefined/.test(r.error), r.error);
  }
  assert.ok(
    responses.some((r) => r.finish_reason !== 'error'),
    'some requests were valid and answered',
  );
  if (process.env.FUZZ_VERBOSE) {
    const kinds = new Map<string, number>();
    for (const r of responses)
      kinds.set(`${r.finish_reason} ${String(r.error ?? '').slice(0, 50)}`, (kinds.get(`${r.finish_reason} ${String(r.error ?? '').slice(0, 50)}`) ?? 0) + 1);
    console.log([...kinds].sort((a, b) => b[1] - a[1]));
  }
});
