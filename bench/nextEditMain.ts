// npm run eval:next-edit [-- --limit N] [--model DIR] [--threads N]
// Next-edit suggestions on the frozen set bench/nextEdit/cases.jsonl (real pairs of related edits from six
// projects' histories; bench/nextEdit/SOURCES.md): after the user's edit A, is the commit's next edit B proposed?
// - The oracle (always): a generator that answers with the true updated window, through the whole request
//   (`predictNextEdit`: history, prompt, parsing, checks). What it loses is lost by the pipeline, whatever the
//   model; the target is at least 99% of the cases whose B lies inside the window shown unchanged.
// - With --model DIR: the same through that model, loaded in-process (Engine.load): exact match (the edits
//   applied give exactly the commit's file), shown rate, losses by reason, time per request.
// Cases whose B lies outside the window (or that have no window) cannot be answered by a model that rewrites the
// window: they are counted apart and left out of the exact-match denominators. Writes bench/results/next-edit.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Generator } from '../src/completion/generator';
import { packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { flagValue } from './machine';
import { readNextEditCases } from './nextEdit/cases';
import { type CaseRecord, oracleGenerator, runCases, type Tally, tally } from './nextEdit/evaluate';
import { median, percentile, round, wilson } from './stats';

const pct = (k: number, n: number) => (n === 0 ? 'n/a' : `${round((100 * k) / n, 1)}%`);

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function summarize(records: CaseRecord[]) {
  const t = tally(records);
  const ms = records.map((r) => r.result.ms);
  const byGroup = (key: (r: CaseRecord) => string) => {
    const groups = new Map<string, CaseRecord[]>();
    for (const r of records) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
    return Object.fromEntries(
      [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, rs]) => {
          const g = tally(rs);
          return [k, { cases: g.cases, in_window: g.inWindow, shown_exact: g.shownExact, shown: g.shown }];
        }),
    );
  };
  return {
    ...t,
    shown_exact_rate_in_window: t.inWindow ? round(t.shownExact / t.inWindow, 4) : null,
    shown_exact_ci95: wilson(t.shownExact, t.inWindow),
    shown_rate: t.cases ? round(t.shown / t.cases, 4) : null,
    ms: { p50: round(median(ms)), p90: round(percentile(ms, 90)) },
    by_language: byGroup((r) => r.language),
    by_repo: byGroup((r) => r.repo),
    different: records.filter((r) => r.result.kind === 'shown' && !r.result.exact).map((r) => ({ id: r.id, reach: r.reach, shown_window: r.shownWindow })),
    lost_in_window: records
      .filter((r) => r.reach === 'inside' && r.result.kind === 'dropped')
      .map((r) => ({
        id: r.id,
        reason: r.result.kind === 'dropped' ? r.result.reason : '',
        detail: r.result.kind === 'dropped' ? r.result.detail : undefined,
      })),
  };
}

function printTable(name: string, t: Tally & { ms: { p50: number; p90: number } }, timed: boolean): void {
  console.log(`\n### ${name}\n`);
  console.log(
    '| cases | B inside the window | outsideWindow (set) | noWindow (set) | exact: shown unchanged (of inside) | shown (of all) | shown, different |',
  );
  console.log('|---|---|---|---|---|---|---|');
  console.log(
    `| ${t.cases} | ${t.inWindow} | ${t.outsideWindow} | ${t.noWindow} | ${t.shownExact} (${pct(t.shownExact, t.inWindow)}) | ` +
      `${t.shown} (${pct(t.shown, t.cases)}) | ${t.shownDifferent} |`,
  );
  const reasons = Object.keys(t.losses).sort();
  if (reasons.length) {
    console.log('\n| lost: reason | in-window cases | all cases |');
    console.log('|---|---|---|');
    for (const r of reasons) console.log(`| ${r} | ${t.lossesInWindow[r as keyof Tally['losses']] ?? 0} | ${t.losses[r as keyof Tally['losses']]} |`);
  }
  if (timed) console.log(`\ntime per request: p50 ${t.ms.p50} ms, p90 ${t.ms.p90} ms`);
}

/** The engine behind the Generator seam, in this process. */
function engineGenerator(engine: Engine): Generator {
  return { generate: (prompt, options, hooks) => engine.generate(prompt, options, hooks) };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const limit = flagValue(argv, 'limit') ? Number(flagValue(argv, 'limit')) : Infinity;
  const modelDir = flagValue(argv, 'model');
  const threads = flagValue(argv, 'threads') ? Number(flagValue(argv, 'threads')) : undefined;
  const log = (s: string) => console.error(`[next-edit] ${s}`);
  const cases = readNextEditCases(undefined, limit);
  log(`${cases.length} cases`);

  const oracleRecords = await runCases(cases, oracleGenerator);
  const oracle = summarize(oracleRecords);
  printTable('oracle (the true updated window)', oracle, false);
  for (const d of oracle.different) console.log(`shown, different: ${d.id}`);
  for (const l of oracle.lost_in_window) console.log(`lost in window: ${l.id}: ${l.reason}${l.detail ? ` (${l.detail})` : ''}`);

  let model: (ReturnType<typeof summarize> & { dir: string; load_ms: number; records: CaseRecord[] }) | undefined;
  if (modelDir) {
    const t0 = performance.now();
    const engine = await Engine.load(path.resolve(modelDir), { threads });
    const loadMs = round(performance.now() - t0);
    log(`model ${modelDir} loaded in ${loadMs} ms`);
    const generator = engineGenerator(engine);
    const records: CaseRecord[] = [];
    for (const [i, c] of cases.entries()) {
      records.push(...(await runCases([c], () => generator)));
      if ((i + 1) % 25 === 0) log(`${i + 1}/${cases.length}`);
    }
    await engine.dispose();
    model = { dir: modelDir, load_ms: loadMs, ...summarize(records), records };
    printTable(`model ${path.basename(path.resolve(modelDir))}`, model, true);
  }

  const out = {
    command: ['npm run eval:next-edit', ...(argv.length ? ['--', ...argv] : [])].join(' '),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
    set: {
      file: 'bench/nextEdit/cases.jsonl',
      cases: cases.length,
      by_language: countBy(cases, (c) => c.language),
      by_repo: countBy(cases, (c) => `${c.repo} (${c.language})`),
    },
    oracle,
    ...(model ? { model } : {}),
  };
  const file = path.join(root, 'bench', 'results', 'next-edit.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${path.relative(root, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
