// `npm run bench:export-load [-- --mb 400 --rounds 3]`: what reading an ONNX export's graph without its inline
// weights costs (model/graphOnly.ts; the GPU's device cache variant of a Hugging Face export is made from it at
// load). A synthetic graph of float32 MatMuls with `--mb` of inline weights is written to a temp folder; each
// round then opens it in a fresh process both ways, interleaved: the file as it is, and the graph read alone
// with its weights referenced in place (loaded from memory, onnxruntime told the folder). Per way: the graph
// read, the session load, the peak resident memory (VmHWM) and one run, whose outputs must agree. Then what a
// keystroke's crop of an export's KV cache costs on the host (kvCache.ts): the crop alone, as the GPU path pays
// it now (its copy on the GPU serves the run), and the crop with the join the CPU path pays when it feeds the
// cache, which is what every crop cost before. Writes bench/results/export-load.json.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { packageRoot } from '../src/engine/host/defaultModel';
import { readGraphOnly } from '../src/engine/model/graphOnly';
import type { IoContract } from '../src/engine/model/ioContract';
import { KvCache } from '../src/engine/model/kvCache';

const SIDE = 1024;

interface Sample {
  way: 'file' | 'graph-only';
  readMs: number;
  loadMs: number;
  peakMB: number;
  runMs: number;
  checksum: number;
}

function writeModel(file: string, mb: number): void {
  const layers = Math.max(1, Math.round((mb * 1024 * 1024) / (SIDE * SIDE * 4)));
  const node: onnx.INodeProto[] = [];
  const initializer: onnx.ITensorProto[] = [];
  let x = 'x';
  for (let i = 0; i < layers; i++) {
    const w = Float32Array.from({ length: SIDE * SIDE }, (_, j) => (((i * 31 + j * 17) % 13) - 6) / 400);
    initializer.push({ name: `w${i}`, dataType: onnx.TensorProto.DataType.FLOAT, dims: [SIDE, SIDE], rawData: new Uint8Array(w.buffer) });
    node.push({ opType: 'MatMul', input: [x, `w${i}`], output: [`h${i}`] });
    x = `h${i}`;
  }
  const info = (name: string) => ({
    name,
    type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 1 }, { dimValue: SIDE }] } } },
  });
  const model = {
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    graph: { name: 'bench', node, initializer, input: [info('x')], output: [info(x)] },
  };
  fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
}

/** One way, in this (fresh) process. */
async function sample(file: string, way: Sample['way']): Promise<Sample> {
  const t0 = performance.now();
  let session: InferenceSession;
  let readMs = 0;
  if (way === 'file') session = await InferenceSession.create(file);
  else {
    const bytes = onnx.ModelProto.encode(readGraphOnly(file)).finish();
    readMs = performance.now() - t0;
    session = await InferenceSession.create(bytes, { extra: { session: { model_external_initializers_file_folder_path: path.dirname(file) } } });
  }
  const loadMs = performance.now() - t0;
  const r0 = performance.now();
  const out = await session.run({ x: new Tensor('float32', new Float32Array(SIDE).fill(1), [1, SIDE]) });
  const runMs = performance.now() - r0;
  const y = (out[session.outputNames[0]] as Tensor).data as Float32Array;
  const peakMB = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;
  return { way, readMs, loadMs, peakMB, runMs, checksum: y.reduce((s, v) => s + Math.abs(v), 0) };
}

const CROP_POSITIONS = 1500;
const CROP_ROUNDS = 7;

/** A KvCache of the Qwen2.5-Coder-1.5B shape's size (28 layers, 2 KV heads of 128), cropped by a few tokens. */
function cropCost(): { cacheBytes: number; cropMs: number; cropAndJoinMs: number } {
  const contract = { layers: 28, kvHeads: 2, headDim: 128, kvType: 'float32' } as IoContract;
  const present = Array.from(
    { length: 2 * contract.layers },
    () => new Tensor('float32', new Float32Array(2 * CROP_POSITIONS * 128).fill(1), [1, 2, CROP_POSITIONS, 128]),
  );
  const cache = KvCache.empty(contract).advance(
    present,
    Array.from({ length: CROP_POSITIONS }, (_, i) => i),
  );
  const [crop, join]: number[][] = [[], []];
  for (let r = 0; r < CROP_ROUNDS; r++) {
    let t0 = performance.now();
    cache.crop(CROP_POSITIONS - 5 - r);
    crop.push(performance.now() - t0);
    t0 = performance.now();
    void cache.crop(CROP_POSITIONS - 5 - r).tensors;
    join.push(performance.now() - t0);
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  return { cacheBytes: cache.bytes, cropMs: median(crop), cropAndJoinMs: median(join) };
}

async function main(): Promise<void> {
  const [, , child, file, way] = process.argv;
  if (child === '--child') {
    process.stdout.write(JSON.stringify(await sample(file, way as Sample['way'])));
    return;
  }
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const [mb, rounds] = [arg('--mb', 400), arg('--rounds', 3)];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-export-load-'));
  const model = path.join(dir, 'model.onnx');
  writeModel(model, mb);
  const size = fs.statSync(model).size;
  const samples: Sample[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const way of ['file', 'graph-only'] as const) {
      samples.push(JSON.parse(execFileSync(process.execPath, [__filename, '--child', model, way], { encoding: 'utf8' })) as Sample);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const crop = cropCost();
  if (new Set(samples.map((s) => s.checksum)).size !== 1) throw new Error('the two ways computed different outputs');
  const round = (v: number) => Math.round(v);
  console.log(`a ${(size / 1048576).toFixed(0)} MB graph with inline weights, ${rounds} interleaved rounds:`);
  for (const s of samples)
    console.log(`  ${s.way.padEnd(10)} read ${round(s.readMs)} ms, load ${round(s.loadMs)} ms, peak ${round(s.peakMB)} MB, run ${s.runMs.toFixed(1)} ms`);
  console.log(
    `a keystroke's crop of a ${(crop.cacheBytes / 1e6).toFixed(0)} MB export cache (the 1.5B shape at ${CROP_POSITIONS} tokens), median of ${CROP_ROUNDS}: ` +
      `${crop.cropMs.toFixed(3)} ms, ${crop.cropAndJoinMs.toFixed(1)} ms with the join`,
  );
  const out = path.join(packageRoot(__dirname), 'bench', 'results', 'export-load.json');
  fs.writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), fileBytes: size, samples, crop }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
