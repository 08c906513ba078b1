// npm run bench:pause-latency [-- --threads N] [--quick] [--shapes 0.5b,1.5b] [--partial-line-ms N]: the wait users feel, issue 24.
// 1. The default model types the replay files through the editor's pipeline; every request's length and stop
//    reason is recorded (a real model's lengths), with the pause latency, completed/cancelled and the cost.
// 2. The random-weight Qwen2.5-Coder 0.5B and 1.5B shapes (converted to q4 once, cached in the bench cache)
//    replay the same keystrokes, each request writing exactly the recorded number of tokens.
// Writes bench/results/pause-latency.json with the bench keys latency.qwen05b.pause_p50_ms and friends.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { cpuFlags, flagValue } from './machine';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { typingReplay, type TypingReplayResult } from './typingReplay';

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => flagValue(argv, name);
  const root = packageRoot(__dirname);
  const quick = argv.includes('--quick');
  const threads = Number(arg('threads') ?? 2);
  const shapes = shapesArg(arg('shapes'));
  const log = (s: string) => console.error(`[bench:pause-latency ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const workerPath = path.join(root, 'dist', 'worker.js');
  // Frozen copies of two of our files (completionService.ts at 60a7989, make_random_checkpoint.py): the replay
  // types the same text whatever the sources become, so runs of different commits compare.
  const files = [path.join(root, 'bench', 'replay', 'completionService.ts.txt'), path.join(root, 'bench', 'replay', 'make_random_checkpoint.py.txt')].slice(
    0,
    quick ? 1 : 2,
  );
  // --partial-line-ms N: the inline preset's partialLineMs for every model (default: the product's).
  const partialLineMs = arg('partial-line-ms') === undefined ? undefined : Number(arg('partial-line-ms'));
  const replayOpts = { threads, charsPerFile: quick ? 120 : 400, gapMs: 150, pauseMs: 500, speculativeTokens: 0, partialLineMs };
  const loadavg = os.loadavg();

  log(`default model over ${files.length} files (records the lengths)`);
  const defaultRun = await typingReplay(workerPath, path.join(root, 'models', 'ghostline-code-small'), files, replayOpts);
  const runs: Record<string, TypingReplayResult & { convert_s?: number }> = { default: defaultRun };
  for (const shape of shapes) {
    const { converted, convertS } = ensureConvertedShape(root, log, shape);
    log(`${shape} shape with the default model's lengths`);
    runs[shape] = { ...(await typingReplay(workerPath, converted, files, { ...replayOpts, lengths: defaultRun.lengths })), convert_s: convertS };
  }
  const key = (shape: string) => `qwen${shape.replace('.', '')}`;
  const keys: Record<string, number> = {};
  for (const shape of shapes) {
    const p = runs[shape].pause;
    keys[`latency.${key(shape)}.pause_p50_ms`] = p.p50_ms;
    keys[`latency.${key(shape)}.pause_p90_ms`] = p.p90_ms;
    keys[`latency.${key(shape)}.pause_p99_ms`] = p.p99_ms;
    keys[`cpu.${key(shape)}.cpu_s_per_100_keys`] = runs[shape].cost.cpu_s_per_100_keys;
  }
  const out = {
    command: `npm run bench:pause-latency -- ${argv.join(' ')}`.trim(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, instruction_set: cpuFlags(), node: process.version, loadavg_at_start: loadavg },
    threads,
    files: files.map((f) => path.relative(root, f)),
    keys,
    runs: Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, { ...r, lengths: undefined, lengths_recorded: Object.keys(r.lengths).length }])),
  };
  const file = path.join(root, 'bench', 'results', 'pause-latency.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  for (const [name, r] of Object.entries(runs)) {
    const p = r.pause;
    console.log(
      `${name}: ${p.pauses} pauses p50/p90/p99 ${p.p50_ms}/${p.p90_ms}/${p.p99_ms} ms, ${Math.round(p.under_300ms_share * 100)}% under 300 ms, ` +
        `shown ${p.shown}; typed over: ${p.typed_over.completed} completed, ${p.typed_over.cancelled} cancelled; ` +
        `${r.cost.cpu_s_per_100_keys} CPU-s/100 keys, ${r.cost.generated_tokens} tokens (${r.cost.wasted_tokens} wasted), ` +
        `${r.cost.stopped_at_first_line} stopped at their first line`,
    );
  }
  console.log(`wrote ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
