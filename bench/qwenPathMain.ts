// npm run bench:qwen-path [-- --threads N] [--qwen-checkpoint DIR] [--no-llama]: the Qwen2.5-Coder-0.5B path of
// `npm run bench` alone (converter, engine against llama.cpp on the same Q4_0 codes at 128 and 1,200 prompt
// tokens, bandwidth fraction, typing replay on the converted graph), without the default-model rows and the
// torch.onnx export (no torch needed). Writes bench/results/qwen-path.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { measureReadBandwidth } from './bandwidth';
import { ensureNodeLlamaCpp } from './llamaCpp';
import { ensureQwenCheckpoint, qwenPath } from './qwenPath';
import { flagValue } from './machine';

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => flagValue(argv, name);
  const root = packageRoot(__dirname);
  const log = (s: string) => console.error(`[bench:qwen-path ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const threads = Number(arg('threads') ?? 2);
  const checkpoint = arg('qwen-checkpoint') ?? ensureQwenCheckpoint(root, log);
  const benchDeps = argv.includes('--no-llama') ? null : ensureNodeLlamaCpp(root);
  log(`read bandwidth at ${threads} threads`);
  const readBandwidth = await measureReadBandwidth(threads);
  const startedAt = new Date().toISOString();
  const loadavg = os.loadavg();
  const result = await qwenPath({
    root,
    threads,
    rounds: [5, 3],
    newTokens: 32,
    promptTokens: [128, 1200],
    workerPath: path.join(root, 'dist', 'worker.js'),
    replayFiles: [path.join(root, 'src', 'completion', 'completionService.ts')],
    readBandwidth,
    benchDeps,
    torchDir: null,
    checkpoint,
    log,
  });
  const out = {
    command: `npm run bench:qwen-path -- ${argv.join(' ')}`.trim(),
    started_at: startedAt,
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadavg_at_start: loadavg },
    read_bandwidth_gb_s: Math.round(readBandwidth / 1e8) / 10,
    ...result,
  };
  const file = path.join(root, 'bench', 'results', 'qwen-path.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  const len = (n: number) => result.by_length[String(n)];
  for (const n of [128, 1200]) {
    const rows = len(n)?.rows as Record<string, { decode_tokens_per_s: number; prefill_tokens_per_s: number }> | undefined;
    if (!rows) continue;
    const cells = Object.entries(rows).map(([k, r]) => `${k} decode ${r.decode_tokens_per_s} tok/s, prefill ${r.prefill_tokens_per_s} tok/s`);
    console.log(
      `${n} prompt tokens: ${cells.join(' | ')}; decode vs llama.cpp ${len(n).decode_ratio_vs_llamacpp}, prefill ${len(n).prefill_ratio_vs_llamacpp}`,
    );
  }
  console.log(`bandwidth fraction ${result.fraction_of_bandwidth_limit}; typing p50/p95 ${result.typing.latency_ms.p50}/${result.typing.latency_ms.p95} ms`);
  if (result.errors.length) console.log(`errors: ${result.errors.join('; ')}`);
  console.log(`wrote ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
