// npm run bench:abandoned-prefill [-- --shapes 0.5b,1.5b] [--rounds 3] [--threads 2]: the keystroke after an
// abandoned prefill whose cache was to move runs (EngineOptions.moveCachedRunsOverMs). A chunk of another file
// joins the extra context (the ring adds new chunks at the end of the prompt's head), so the prompt changes
// there and the whole current file after it is a run the cache holds at other positions. The request for it is
// typed over during its first prefill pass; the next keystroke's request is timed, through the worker process
// the editor starts, against the same request when nothing was abandoned. The texts are the frozen replay files
// (bench/replay). Writes bench/results/abandoned-prefill.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { buildPrompt } from '../src/completion/prompt/buildPrompt';
import type { DocumentContext, ExtraChunk } from '../src/completion/types';
import { packageRoot } from '../src/engine/host/defaultModel';
import { EngineClient } from '../src/engine/host/client';
import type { Prompt } from '../src/engine/shared/prompt';
import type { GenerationStats } from '../src/engine/shared/types';
import { cpuFlags, flagValue } from './machine';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { median, round } from './stats';

/** The first request is typed over this long after it starts: within its first prefill pass on both shapes. */
const TYPED_OVER_AFTER_MS = 150;
const OPTIONS = { maxNewTokens: 8, ignoreEos: true, speculativeTokens: 0, temperature: 0 };

interface Timed {
  ms: number;
  prefill_tokens: number;
  reused_tokens: number;
  prompt_tokens: number;
}

/** The prompts: the current file with one extra chunk, then with a second chunk joined, then a key typed. */
function prompts(root: string, specials: Record<string, number>): { before: Prompt; joined: Prompt; typed: Prompt } {
  const template = pickFimTemplate(specials);
  if (!template) throw new Error('the shape has no FIM tokens');
  const replay = (f: string) => fs.readFileSync(path.join(root, 'bench', 'replay', f), 'utf8').split('\n');
  const file = replay('completionService.ts.txt');
  const other = replay('make_random_checkpoint.py.txt');
  const chunk = (from: number): ExtraChunk => ({ path: 'make_random_checkpoint.py', text: other.slice(from, from + 10).join('\n') });
  const cursor = 120;
  const ctx = (linePrefix: string): DocumentContext => ({
    prefix: `${file.slice(80, cursor).join('\n')}\n`,
    linePrefix,
    lineSuffix: '',
    suffix: `\n${file.slice(cursor + 1, cursor + 30).join('\n')}`,
    nextLines: [],
    indent: '    ',
    prefixStartLine: 80,
    lineAbove: file[cursor - 1],
  });
  const at = (extra: ExtraChunk[], linePrefix: string) => buildPrompt(ctx(linePrefix), template, extra, 'src/completion/completionService.ts').prompt;
  return { before: at([chunk(0)], '    const'), joined: at([chunk(0), chunk(40)], '    const'), typed: at([chunk(0), chunk(40)], '    const ') };
}

const timed = (t0: number, s: GenerationStats): Timed => ({
  ms: round(performance.now() - t0),
  prefill_tokens: s.prefillTokens,
  reused_tokens: s.reusedTokens,
  prompt_tokens: s.promptTokens,
});

async function main() {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const threads = Number(flagValue(argv, 'threads') ?? 2);
  const rounds = Number(flagValue(argv, 'rounds') ?? 3);
  const shapes = shapesArg(flagValue(argv, 'shapes'));
  const log = (s: string) => console.error(`[bench:abandoned-prefill ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const results: Record<string, unknown> = {};
  for (const shape of shapes) {
    const dir = ensureConvertedShape(root, log, shape).converted;
    const client = new EngineClient();
    const info = await client.load(dir, { threads });
    try {
      const p = prompts(root, info.specialTokens);
      const afterAbandoned: Timed[] = [];
      const uninterrupted: Timed[] = [];
      for (let r = 0; r < rounds; r++) {
        // The same start each time: the file with one chunk, fully prefilled (it measures the prefill speed too).
        await client.resetCache();
        await client.generate(p.before, OPTIONS);
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), TYPED_OVER_AFTER_MS);
        const first = await client.generate(p.joined, OPTIONS, { signal: ac.signal });
        clearTimeout(timer);
        if (first.finishReason !== 'cancelled') throw new Error(`the first request was not typed over (${first.finishReason})`);
        let t0 = performance.now();
        afterAbandoned.push(timed(t0, (await client.generate(p.typed, OPTIONS)).stats));
        await client.resetCache();
        await client.generate(p.before, OPTIONS);
        t0 = performance.now();
        uninterrupted.push(timed(t0, (await client.generate(p.typed, OPTIONS)).stats));
        log(`${shape} round ${r + 1}: after an abandoned prefill ${afterAbandoned[r].ms} ms, uninterrupted ${uninterrupted[r].ms} ms`);
      }
      const summary = (xs: Timed[]) => ({
        median_ms: round(median(xs.map((x) => x.ms))),
        ms: xs.map((x) => x.ms),
        prefill_tokens: xs.map((x) => x.prefill_tokens),
        reused_tokens: xs.map((x) => x.reused_tokens),
        prompt_tokens: xs[0]?.prompt_tokens,
      });
      results[shape] = { after_abandoned: summary(afterAbandoned), uninterrupted: summary(uninterrupted), move_over_ms: info.moveCachedRunsOverMs };
    } finally {
      await client.dispose();
    }
  }
  const out = {
    command: `npm run bench:abandoned-prefill -- ${argv.join(' ')}`.trim(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, instruction_set: cpuFlags(), node: process.version, loadavg_at_end: os.loadavg() },
    threads,
    rounds,
    typed_over_after_ms: TYPED_OVER_AFTER_MS,
    shapes: results,
  };
  const file = path.join(root, 'bench', 'results', 'abandoned-prefill.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
  console.log(`wrote ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
