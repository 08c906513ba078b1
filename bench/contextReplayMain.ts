// npm run bench:context-replay [-- --threads N] [--quick] [--shapes 0.5b] [--rounds R] [--modes off,on] [--no-default] [--pause-ms MS]
// Modes: off, on (the editor-free sources), and on+definitions / on+definitions-per-line (with a stand-in for the
// editor's language-server definitions source, keeping earlier lines' definitions as the product does, or not).
// Issue 42: what repository context costs while typing. The replay of bench:pause-latency (the same frozen files, the
// same rhythm) with context off and on, alternating, on the default model and the random-weight Qwen2.5-Coder
// shapes: prefilled tokens per keystroke (the KV cache keeps working), the pause latency (p50/p90 must not get
// worse by more than 10% on the 0.5B shape), and the gathering (in the background: its time per gather, and the
// pipeline's own time per answer, which gathering must not add to). The replayed files take their places in this
// repository (src/completion/completionService.ts, tools/model/make_random_checkpoint.py), so their imports
// resolve to this checkout's files. Writes bench/results/context-replay.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { cpuFlags, flagValue } from './machine';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { typingReplay, type TypingReplayResult } from './typingReplay';

const PLACES: Record<string, string> = {
  'completionService.ts.txt': 'src/completion/completionService.ts',
  'make_random_checkpoint.py.txt': 'tools/model/make_random_checkpoint.py',
};

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => flagValue(argv, name);
  const root = packageRoot(__dirname);
  const quick = argv.includes('--quick');
  const threads = Number(arg('threads') ?? 2);
  const rounds = Number(arg('rounds') ?? 1);
  const shapes = shapesArg(arg('shapes') ?? '0.5b');
  const modes = (arg('modes') ?? 'off,on').split(',');
  const known = ['off', 'on', 'on+definitions', 'on+definitions-per-line'];
  for (const m of modes) if (!known.includes(m)) throw new Error(`--modes: unknown mode "${m}" (${known.join(', ')})`);
  const withDefault = !argv.includes('--no-default');
  const log = (s: string) => console.error(`[bench:context-replay ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const workerPath = path.join(root, 'dist', 'worker.js');
  const files = Object.keys(PLACES)
    .map((f) => path.join(root, 'bench', 'replay', f))
    .slice(0, quick ? 1 : 2);
  // --pause-ms: how long the typist stays at a pause (answer included); 500 ms is issue 24's shortest pause.
  const replayOpts = { threads, charsPerFile: quick ? 120 : 400, gapMs: 150, pauseMs: Number(arg('pause-ms') ?? 500), speculativeTokens: 0 };
  const context = { root, pathOf: (file: string) => PLACES[path.basename(file)] ?? path.basename(file) };
  const summary = (r: TypingReplayResult) => ({
    pause_p50_ms: r.pause.p50_ms,
    pause_p90_ms: r.pause.p90_ms,
    pause_p99_ms: r.pause.p99_ms,
    shown: r.pause.shown,
    mean_prefill_tokens: r.mean_prefill_tokens,
    long_prefills: r.long_prefills,
    slowest_pauses: r.pause.slowest,
    median_prefill_tokens: r.median_prefill_tokens,
    median_prompt_tokens: r.median_prompt_tokens,
    cpu_s_per_100_keys: r.cost.cpu_s_per_100_keys,
    context: r.context,
  });
  const runs: Record<string, Record<string, ReturnType<typeof summary>[]>> = {};
  const record = (model: string, mode: string, r: ReturnType<typeof summary>) => {
    runs[model] ??= {};
    runs[model][mode] ??= [];
    runs[model][mode].push(r);
  };
  const loadavg = os.loadavg();
  for (let round = 0; round < rounds; round++) {
    // The modes in order in even rounds, reversed in odd ones: a machine that warms up or slows down favours none.
    const order = round % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of order) {
      const contextOf = (m: string) =>
        m === 'off' ? undefined : m === 'on' ? context : { ...context, definitions: { keep: m !== 'on+definitions-per-line' } };
      // The default model's run also records the lengths the shapes replay (random weights never end a line).
      log(`round ${round + 1}: default model, context ${mode}`);
      const base = await typingReplay(workerPath, path.join(root, 'models', 'ghostline-code-small'), files, { ...replayOpts, context: contextOf(mode) });
      if (withDefault) record('default', mode, summary(base));
      for (const shape of shapes) {
        const { converted } = ensureConvertedShape(root, log, shape);
        log(`round ${round + 1}: ${shape} shape, context ${mode}`);
        const r = await typingReplay(workerPath, converted, files, { ...replayOpts, lengths: base.lengths, context: contextOf(mode) });
        record(shape, mode, summary(r));
      }
    }
  }
  const out = {
    command: `npm run bench:context-replay -- ${argv.join(' ')}`.trim(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, instruction_set: cpuFlags(), node: process.version, loadavg_at_start: loadavg },
    threads,
    files: files.map((f) => `${path.relative(root, f)} as ${context.pathOf(f)}`),
    runs,
  };
  const file = path.join(root, 'bench', 'results', 'context-replay.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(
    '| model | context | pause p50 / p90 / p99 ms | prefilled tokens per request (mean / median) | model calls prefilling 64+ tokens | context changes (keystrokes) | prompt tokens (median) | context chars (median) | gather p50 / p95 ms | pipeline ms per answer (p50) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [model, modes] of Object.entries(runs))
    for (const [mode, list] of Object.entries(modes))
      for (const r of list)
        console.log(
          `| ${model} | ${mode} | ${r.pause_p50_ms} / ${r.pause_p90_ms} / ${r.pause_p99_ms} | ${r.mean_prefill_tokens} / ${r.median_prefill_tokens} | ${r.long_prefills} | ${r.context.changes ?? '-'} | ${r.median_prompt_tokens} | ${r.context.median_context_chars ?? 0} | ${r.context.gather_p50_ms ?? '-'} / ${r.context.gather_p95_ms ?? '-'} | ${r.context.host_ms_p50} |`,
        );
  console.log(`wrote ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
