// npm run eval:moved-runs [-- --model DIR] [--files a,b] [--lines N]: what moving cached runs (EngineOptions
// .moveCachedRunsOverMs, llama.cpp's --cache-reuse) does to suggestions. Two engines on the same lean graph, one
// moving runs at every chance (over 0 ms) and one reusing shared prefixes only (every result then equals a cold run's), answer the same
// sequence of requests: the end of every line of real files typed from top to bottom, so the window start
// and the FIM anchor move as they do while typing. Counts the requests whose cache moved runs, how many
// tokens that saved, and how many suggestions differ from the exact engine's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CompletionService } from '../src/completion/completionService';
import { textSource } from '../src/completion/context/documentContext';
import type { Generator } from '../src/completion/generator';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { Engine } from '../src/engine/worker/engine';
import { editSimilarity } from './editSimilarity';
import { flagValue } from './machine';
import { round } from './stats';
import { packageRoot } from '../src/engine/host/defaultModel';

interface Side {
  engine: Engine;
  service: CompletionService;
  prefill: number[];
  reused: number[];
}

async function side(dir: string, move: boolean): Promise<Side> {
  const engine = await Engine.load(dir, { threads: 1, moveCachedRunsOverMs: move ? 0 : -1 });
  const s: Side = { engine, service: null as unknown as CompletionService, prefill: [], reused: [] };
  const g: Generator = {
    generate: async (prompt, options, hooks) => {
      const r = await engine.generate(prompt, options, hooks);
      s.prefill.push(r.stats.prefillTokens);
      s.reused.push(r.stats.reusedTokens);
      return r;
    },
  };
  s.service = new CompletionService(
    g,
    () => pickFimTemplate(engine.info.specialTokens),
    () => ({ ...defaultCompletionSettings(), prefetch: false, minConfidence: 0 }),
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
  );
  return s;
}

async function main() {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const dir = flagValue(argv, 'model');
  if (!dir) throw new Error('--model DIR: a lean graph (ghostline convert), e.g. the default model converted with --quant q4');
  const files = (flagValue(argv, 'files') ?? 'bench/replay/completionService.ts.txt,bench/replay/make_random_checkpoint.py.txt').split(',');
  const maxLines = Number(flagValue(argv, 'lines') ?? 400);
  const [moving, exact] = [await side(dir, true), await side(dir, false)];
  let requests = 0;
  let moved = 0;
  let differ = 0;
  let differMoved = 0;
  let savedTokens = 0;
  let exactPrefill = 0;
  let [rightMoving, rightExact, shownMoving, shownExact, simMoving, simExact] = [0, 0, 0, 0, 0, 0];
  const examples: { file: string; line: number; moving: string; exact: string }[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n').slice(0, maxLines);
    const languageId = file.includes('.py') ? 'python' : 'typescript';
    for (let i = 1; i < lines.length; i++) {
      // Line i about to be typed: the document holds the lines above and below it, the cursor on an empty line i.
      const doc = textSource([...lines.slice(0, i), '', ...lines.slice(i + 1)].join('\n'));
      const truth = lines[i].trim();
      const req = { doc, cursor: { line: i, character: 0 }, languageId, path: file, explicit: false };
      const a = await moving.service.complete(req);
      const b = await exact.service.complete(req);
      if (a.source !== 'model' && b.source !== 'model') continue;
      requests++;
      const didMove = moving.reused[moving.reused.length - 1] > exact.reused[exact.reused.length - 1];
      const same = JSON.stringify(a.items) === JSON.stringify(b.items);
      // Right: the suggestion's first line is the line typed there, or a start of it of 4 characters or more.
      const right = (items: string[]) => {
        const first = (items[0] ?? '').split('\n')[0].trim();
        return first.length >= 4 && truth.startsWith(first);
      };
      if (right(a.items)) rightMoving++;
      if (right(b.items)) rightExact++;
      const sim = (items: string[]) => editSimilarity((items[0] ?? '').split('\n')[0].trim(), truth);
      simMoving += sim(a.items);
      simExact += sim(b.items);
      if (a.items.length > 0) shownMoving++;
      if (b.items.length > 0) shownExact++;
      exactPrefill += exact.prefill[exact.prefill.length - 1] ?? 0;
      if (didMove) {
        moved++;
        savedTokens += (exact.prefill[exact.prefill.length - 1] ?? 0) - (moving.prefill[moving.prefill.length - 1] ?? 0);
      }
      if (!same) {
        differ++;
        if (didMove) differMoved++;
        if (examples.length < 8) examples.push({ file, line: i, moving: a.items[0] ?? '', exact: b.items[0] ?? '' });
      }
    }
  }
  await moving.engine.dispose();
  await exact.engine.dispose();
  const out = {
    command: `npm run eval:moved-runs -- ${argv.join(' ')}`.trim(),
    machine: { cpu: os.cpus()[0]?.model, cpus: os.cpus().length },
    model: path.basename(dir),
    files,
    requests,
    requests_with_moved_runs: moved,
    prefill_tokens_exact: exactPrefill,
    prefill_tokens_saved: savedTokens,
    suggestions_differing: differ,
    shown: { moving: shownMoving, exact: shownExact },
    right_first_line: { moving: rightMoving, exact: rightExact },
    mean_edit_similarity_first_line: { moving: round(simMoving / requests, 4), exact: round(simExact / requests, 4) },
    suggestions_differing_where_runs_moved: differMoved,
    examples,
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'moved-runs.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out, null, 1));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
