// A damaged ONNX file on the GPU path: readGraph (graphOnly.ts) and deviceCacheVariant either give a graph, or a
// reason the caller shows while the plain file runs. Never a throw, a hang, a huge allocation, or a weight
// reference outside the file. The damage lands mostly on the protobuf structure (tags, lengths, names), not in
// the weights' bytes, where it would change nothing the reader looks at.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import * as fc from 'fast-check';
import { onnx } from 'onnx-proto';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { deviceCacheVariant, readGraph } from '../../src/engine/model/deviceCacheVariant';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { ROOT, TINY } from '../helpers';
import { fuzzParams } from './fuzzParams';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-fuzz-graph-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The byte ranges readGraphOnly references instead of copying (the inline weights) in an undamaged file. */
function weightRanges(file: string): [number, number][] {
  const model = readGraph(file);
  if ('why' in model) throw new Error(model.why);
  return (model.graph?.initializer ?? []).flatMap((t) => {
    const e = Object.fromEntries((t.externalData ?? []).map((kv) => [kv.key, kv.value]));
    return e.location === path.basename(file) ? [[Number(e.offset), Number(e.offset) + Number(e.length)] as [number, number]] : [];
  });
}

/** Byte offsets of a file outside its inline weights: where damage reaches the structure. */
function structuralOffsets(size: number, weights: [number, number][]): number[] {
  const out: number[] = [];
  const sorted = [...weights].sort((a, b) => a[0] - b[0]);
  let at = 0;
  for (const [start, end] of [...sorted, [size, size] as [number, number]]) {
    for (let i = at; i < start; i++) out.push(i);
    at = Math.max(at, end);
  }
  return out;
}

const damage = fc.record({
  edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat({ max: 9 })), { minLength: 1, maxLength: 6 }),
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 4 }),
});

for (const [name, source] of [
  ['a Hugging Face export with inline weights', readModelFolder(TINY).onnxPath],
  ['the bundled lean graph (weights in a data file)', readModelFolder(defaultModelDir(ROOT)).onnxPath],
] as const) {
  test(`any damage to ${name}: a graph with references inside the file, or a reason; never a throw`, () => {
    const original = fs.readFileSync(source);
    const structure = structuralOffsets(original.length, weightRanges(source));
    assert.ok(structure.length > 100, 'the structure is found');
    const file = path.join(dir, path.basename(source));
    // A lean graph's data file sits beside it, as the reader expects (it is only named, never read here).
    for (const f of fs.readdirSync(path.dirname(source)))
      if (f !== path.basename(source)) fs.copyFileSync(path.join(path.dirname(source), f), path.join(dir, f));
    const outcomes = { variant: 0, noVariant: 0, unreadable: 0 };
    fc.assert(
      fc.property(damage, ({ edits, cut }) => {
        const bytes = Buffer.from(original);
        for (const [at, value, anywhere] of edits) {
          // One edit in ten lands anywhere, weights included.
          const offset = anywhere === 0 ? at % bytes.length : structure[at % structure.length];
          bytes[offset] = value;
        }
        fs.writeFileSync(file, cut === null ? bytes : bytes.subarray(0, Math.floor(cut * bytes.length)));
        const size = fs.statSync(file).size;
        const model = readGraph(file);
        if ('why' in model) {
          assert.match(model.why, /^the graph file could not be read \(.+\)$/s);
          outcomes.unreadable++;
          return;
        }
        for (const t of model.graph?.initializer ?? []) {
          const e = Object.fromEntries((t.externalData ?? []).map((kv) => [kv.key, kv.value]));
          if (e.location !== path.basename(file)) continue;
          // A reference this reader made points at bytes inside the file, whatever the damage.
          assert.ok(Number(e.offset) >= 0 && Number(e.offset) + Number(e.length) <= size, `${t.name}: ${e.offset}+${e.length} of ${size}`);
        }
        const variant = deviceCacheVariant(model);
        if ('why' in variant) {
          assert.ok(typeof variant.why === 'string' && variant.why.length > 0);
          outcomes.noVariant++;
          return;
        }
        // What is handed to onnxruntime is a model that decodes, and its kept outputs are outputs of it.
        const decoded = onnx.ModelProto.decode(variant.bytes);
        const outputs = new Set((decoded.graph?.output ?? []).map((o) => o.name));
        for (const k of variant.kept) assert.ok(outputs.has(k.output), k.output);
        outcomes.variant++;
      }),
      fuzzParams(2000),
    );
    // The damage reaches every outcome: a property that only ever saw one of them would prove little.
    assert.ok(outcomes.unreadable > 0 && outcomes.noVariant + outcomes.variant > 0, JSON.stringify(outcomes));
  });
}
