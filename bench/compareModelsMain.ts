// npm run bench:compare-models -- DIR_A DIR_B [--threads N] [--rounds R]
// Two model folders (e.g. two exports or quantizations of the same weights) through the engine, interleaved
// generation by generation on real code prompts: decode ms/token, prefill ms, and how many greedy texts agree.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { median, round } from './stats';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string, dflt: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  const dirs = argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
  if (dirs.length !== 2) throw new Error('usage: compareModels DIR_A DIR_B [--threads N] [--rounds R]');
  const threads = opt('threads', 1);
  const rounds = opt('rounds', 3);
  const root = packageRoot(__dirname);
  // Frozen copies (bench/replay/), so every commit compares on the same text, and a file from node_modules.
  const files = ['bench/replay/completionService.ts.txt', 'bench/replay/make_random_checkpoint.py.txt', 'node_modules/semver/classes/range.js'];
  const prompts = files.flatMap((f) => {
    const t = fs.readFileSync(path.join(root, f), 'utf8');
    return [0.3, 0.6, 0.9].map((a) => t.slice(Math.max(0, Math.floor(t.length * a) - 1000), Math.floor(t.length * a)));
  });
  const engines = await Promise.all(dirs.map((d) => Engine.load(d, { threads })));
  const decode: number[][] = [[], []];
  const prefill: number[][] = [[], []];
  let same = 0;
  for (let r = 0; r < rounds; r++) {
    for (const p of prompts) {
      const texts: string[] = [];
      for (let k = 0; k < 2; k++) {
        engines[k].resetCache();
        const g = await engines[k].generate(p, { maxNewTokens: 32, ignoreEos: true });
        decode[k].push(g.stats.decodeMs / g.stats.generatedTokens);
        prefill[k].push(g.stats.prefillMs);
        texts.push(g.text);
      }
      if (texts[0] === texts[1]) same++;
    }
  }
  await Promise.all(engines.map((e) => e.dispose()));
  const row = (k: number) => ({ dir: dirs[k], decode_ms_per_token_p50: round(median(decode[k]), 3), prefill_ms_p50: round(median(prefill[k]), 1) });
  console.log(JSON.stringify({ threads, generations: rounds * prompts.length, a: row(0), b: row(1), same_greedy_text: same }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
