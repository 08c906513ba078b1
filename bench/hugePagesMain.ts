// npm run bench:huge-pages [-- --shapes 0.5b,1.5b] [--rounds 10] [--threads 2]: decode with and without
// transparent huge pages for the weights (host/hugePageMalloc.ts), through the worker process the editor
// starts. Two workers hold the same converted q4 graph, one started with the user opt-out
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=0), one as Ghostline starts it; rounds alternate between them: the same
// prompt (128 tokens), 128 new tokens, greedy, EOS ignored, prompt lookup off, cold cache. Writes
// bench/results/huge-pages.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { EngineClient } from '../src/engine/host/client';
import { loadPromptTokenizer } from '../src/servers/promptTokenizer';
import { syntheticPrompt } from './llamaCpp';
import { cpuFlags, flagValue } from './machine';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { median, round } from './stats';

const PROMPT_TOKENS = 128;
const NEW_TOKENS = 128;

/** A worker started with GLIBC_TUNABLES as given (undefined: Ghostline's own choice). */
async function worker(dir: string, threads: number, tunables: string | undefined): Promise<EngineClient> {
  const saved = process.env.GLIBC_TUNABLES;
  if (tunables === undefined) delete process.env.GLIBC_TUNABLES;
  else process.env.GLIBC_TUNABLES = tunables;
  try {
    const client = new EngineClient();
    await client.load(dir, { threads });
    return client;
  } finally {
    if (saved === undefined) delete process.env.GLIBC_TUNABLES;
    else process.env.GLIBC_TUNABLES = saved;
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const threads = Number(flagValue(argv, 'threads') ?? 2);
  const rounds = Number(flagValue(argv, 'rounds') ?? 10);
  const shapes = shapesArg(flagValue(argv, 'shapes'));
  const log = (s: string) => console.error(`[bench:huge-pages ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const results: Record<string, unknown> = {};
  for (const shape of shapes) {
    const dir = ensureConvertedShape(root, log, shape).converted;
    const sides = { off: await worker(dir, threads, 'glibc.malloc.hugetlb=0'), on: await worker(dir, threads, undefined) };
    try {
      const prompt = syntheticPrompt(loadPromptTokenizer(dir), PROMPT_TOKENS);
      const rates: Record<keyof typeof sides, number[]> = { off: [], on: [] };
      const run = async (side: keyof typeof sides, keep: boolean) => {
        await sides[side].resetCache();
        const r = await sides[side].generate(prompt, { maxNewTokens: NEW_TOKENS, ignoreEos: true, speculativeTokens: 0, temperature: 0 });
        if (keep) rates[side].push(((r.stats.generatedTokens - 1) / (r.stats.totalMs - r.stats.prefillMs)) * 1000);
      };
      await run('off', false);
      await run('on', false);
      for (let r = 0; r < rounds; r++) for (const side of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) await run(side, true);
      const roundRatios = rates.on.map((x, i) => x / rates.off[i]);
      const [off, on] = await Promise.all([sides.off.workerStats(), sides.on.workerStats()]);
      results[shape] = {
        huge_page_bytes: { off: off.hugePageBytes, on: on.hugePageBytes },
        rss_bytes: { off: off.rssBytes, on: on.rssBytes },
        decode_tokens_per_s: { off: rates.off.map((x) => round(x, 1)), on: rates.on.map((x) => round(x, 1)) },
        median_ratio: round(median(rates.on) / median(rates.off), 3),
        round_ratios: roundRatios.map((x) => round(x, 3)),
        median_round_ratio: round(median(roundRatios), 3),
        rounds_faster: roundRatios.filter((x) => x > 1).length,
      };
      log(`${shape}: ${JSON.stringify(results[shape])}`);
    } finally {
      await Promise.all([sides.off.dispose(), sides.on.dispose()]);
    }
  }
  const out = {
    command: `npm run bench:huge-pages -- ${argv.join(' ')}`.trim(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, instruction_set: cpuFlags(), node: process.version, loadavg_at_end: os.loadavg() },
    thp_mode: fs.existsSync('/sys/kernel/mm/transparent_hugepage/enabled')
      ? fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').trim()
      : null,
    threads,
    rounds,
    prompt_tokens: PROMPT_TOKENS,
    new_tokens: NEW_TOKENS,
    shapes: results,
  };
  const file = path.join(root, 'bench', 'results', 'huge-pages.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out, null, 1));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
