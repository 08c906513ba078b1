// The oracle check of `npm run eval:quality` (also alone: `npm run eval:quality -- --oracle`): a perfect
// model (bench/oracle/oracleGenerator.ts) goes through CompletionService at real cursor positions, and every
// perfect answer that comes out dropped, cut or changed is the pipeline's loss. Positions: the eval sets
// plus real code on this machine (Debian's Python standard library, permissively licensed npm packages),
// mid-line, fresh line, multi-line (the body after a block opener) and code after the cursor as auto-closing
// leaves it. Writes bench/results/oracle.json and prints markdown tables for docs/quality.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultCompletionSettings } from '../src/completion/settings';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import { readEvalSamples, sampleCut } from './evalSet';
import { offlineCorpus } from './oracle/corpus';
import { KINDS, type OraclePosition, positionsFromFile, rng } from './oracle/positions';
import { type OracleResult, runOracle } from './oracle/runOracle';

/** The context sizes measured: the default model's, and a real model's (Qwen2.5-Coder and the like at 4,096). */
export const CONTEXTS = [512, 4096];
/** The default model's measured characters per token, used for both sizes (the window scales with it). */
const CHARS_PER_TOKEN = 2.91;

/**
 * The eval sets' positions: the author's rest of the line removed (a line-start one is a fresh line). Each is
 * marked as the slice of a file it is; GHOSTLINE_ORACLE_UNMARKED=1 leaves the mark off, to measure the
 * pipeline on slices it is not told about (as another harness would give them).
 */
export function evalPositions(file: string): OraclePosition[] {
  const set = path.basename(file, '.jsonl');
  return readEvalSamples(file).map((s) => ({
    set,
    path: s.path,
    language: s.language,
    kind: s.kind === 'line-start' ? 'fresh-line' : 'mid-line',
    doc: s.prefix + s.suffix,
    cut: process.env.GHOSTLINE_ORACLE_UNMARKED ? undefined : sampleCut(s),
    cursor: s.prefix.length,
    truth: s.expected.trimEnd(),
  }));
}

/** Positions in the offline corpus: a fixed seed, so every run measures the same ones. */
export function corpusPositions(root: string, perKind = 2, seed = 23): OraclePosition[] {
  const random = rng(seed);
  const files = offlineCorpus(root, { python: 160, javascript: 100, typescript: 100 }, random);
  return files.flatMap((f) => positionsFromFile('offline', f.name, f.language, fs.readFileSync(f.file, 'utf8'), perKind, random));
}

export async function oracleReport(root: string, log: (line: string) => void = console.log): Promise<Record<string, unknown>> {
  const evalDir = path.join(root, 'tools', 'model', 'eval');
  const positions = [
    ...['heldout.jsonl', 'external.jsonl']
      .map((f) => path.join(evalDir, f))
      .filter((f) => fs.existsSync(f))
      .flatMap(evalPositions),
    ...corpusPositions(root),
  ];
  const settings = { ...defaultCompletionSettings(), prefetch: false, alternatives: 1, minConfidence: 0 };
  // A generous parse timeout: on a busy machine the editor's 50 ms would make the numbers vary run to run.
  const syntax = new SyntaxRefiner({ log: (line) => console.error(line), parseTimeoutMs: 2000 });
  for (const lang of new Set(positions.map((p) => p.language))) await syntax.ready(lang);
  const results: OracleResult[] = [];
  for (const n of CONTEXTS) for (const p of positions) results.push(await runOracle(p, settings, n, CHARS_PER_TOKEN, syntax));
  syntax.dispose();
  const report = summarize(results);
  log(markdown(report, positions.length));
  const lost = results.filter((r) => r.outcome !== 'kept');
  fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'bench', 'results', 'oracle-losses.jsonl'),
    `${lost
      .map((r) =>
        JSON.stringify({
          n: r.contextTokens,
          kind: r.position.kind,
          lang: r.position.language,
          path: r.position.path,
          stage: r.stage,
          outcome: r.outcome,
          answered: r.answered,
          shown: r.shown,
          before: r.position.doc.slice(Math.max(0, r.position.cursor - 300), r.position.cursor),
          after: r.position.doc.slice(r.position.cursor, r.position.cursor + 120),
        }),
      )
      .join('\n')}\n`,
  );
  return report;
}

interface Counts {
  n: number;
  kept: number;
  cut: number;
  dropped: number;
  changed: number;
}

const count = (rs: OracleResult[]): Counts => ({
  n: rs.length,
  kept: rs.filter((r) => r.outcome === 'kept').length,
  cut: rs.filter((r) => r.outcome === 'cut').length,
  dropped: rs.filter((r) => r.outcome === 'dropped').length,
  changed: rs.filter((r) => r.outcome === 'changed').length,
});

export function summarize(results: OracleResult[]): Record<string, unknown> {
  const out: Record<string, unknown> = { date: new Date().toISOString() };
  for (const n of CONTEXTS) {
    const rs = results.filter((r) => r.contextTokens === n);
    const byKind: Record<string, Counts> = { all: count(rs) };
    for (const k of KINDS) byKind[k] = count(rs.filter((r) => r.position.kind === k));
    const byLanguage: Record<string, Counts> = {};
    for (const l of [...new Set(rs.map((r) => r.position.language))].sort()) byLanguage[l] = count(rs.filter((r) => r.position.language === l));
    const bySet: Record<string, Counts> = {};
    for (const s of [...new Set(rs.map((r) => r.position.set))]) bySet[s] = count(rs.filter((r) => r.position.set === s));
    const byStage: Record<string, Record<string, number>> = {};
    for (const r of rs)
      if (r.stage) {
        byStage[r.stage] ??= { cut: 0, dropped: 0, changed: 0 };
        byStage[r.stage][r.outcome]++;
      }
    out[`context_${n}`] = { by_kind: byKind, by_language: byLanguage, by_set: bySet, by_stage: byStage };
  }
  return out;
}

const pct = (c: Counts, k: keyof Counts) => (c.n ? `${((100 * c[k]) / c.n).toFixed(1)}%` : '-');

function markdown(report: Record<string, unknown>, positions: number): string {
  const lines = [
    `oracle: ${positions} positions, contexts ${CONTEXTS.join(' and ')} tokens`,
    '',
    '| context | group | n | kept | cut | dropped | changed |',
    '|---|---|---|---|---|---|---|',
  ];
  const stages = ['', '| context | lost at | cut | dropped | changed |', '|---|---|---|---|---|'];
  for (const n of CONTEXTS) {
    const r = report[`context_${n}`] as {
      by_kind: Record<string, Counts>;
      by_language: Record<string, Counts>;
      by_set: Record<string, Counts>;
      by_stage: Record<string, Record<string, number>>;
    };
    for (const [g, c] of [...Object.entries(r.by_kind), ...Object.entries(r.by_language), ...Object.entries(r.by_set)])
      lines.push(`| ${n} | ${g} | ${c.n} | ${pct(c, 'kept')} | ${pct(c, 'cut')} | ${pct(c, 'dropped')} | ${pct(c, 'changed')} |`);
    for (const [s, c] of Object.entries(r.by_stage)) stages.push(`| ${n} | ${s} | ${c.cut} | ${c.dropped} | ${c.changed} |`);
  }
  return [...lines, ...stages].join('\n');
}
