// npm run eval:quality [-- --model DIR] [--data FILE ...] [--limit N] [--min-confidence X] [--no-calibration] [--no-syntax]
//                      [--oracle (the oracle check alone) | --no-oracle] [--generate (Generate from Selection alone) | --no-generate]
//                      [--generate-limit N]
// First the oracle check (bench/qualityOracle.ts): what the pipeline loses of perfect suggestions, no model needed.
// What users feel, per language: how often a suggestion is shown, how often the shown one is exactly the
// rest of the line (precision), how often its first word is right (word-by-word accept), edit similarity,
// and the gate's precision/coverage curve. Every sample goes through the editor's own pipeline
// (CompletionService: context windows, prompt, engine, filters, gate), at an automatic trigger.
// Default sets: heldout and external (tuned on) and frozen (the frozen test split, never tuned on: reported only).
// Writes bench/results/quality.json and, per tuned-on set, the gate's features and labels for `npm run gen:calibration`
// (none for the frozen split, so that no fit or threshold reads it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CompletionService } from '../src/completion/completionService';
import type { ModelTraits } from '../src/completion/types';
import { readCalibration } from '../src/completion/gate/readCalibration';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import { defaultCompletionSettings } from '../src/completion/settings';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { editSimilarity } from './editSimilarity';
import { exactRestOfLine, firstLine, firstWordRight, gateCurve, THRESHOLDS } from './qualityMetrics';
import { generateReport } from './qualityGenerate';
import { oracleReport } from './qualityOracle';
import { median, round, wilson } from './stats';
import { completeSample, LANGUAGE_IDS, readEvalSamples } from './evalSet';
import { flagValue } from './machine';
import type { GateSample } from './gateSample';

/**
 * The eval sets the pipeline was tuned on (gate threshold, context anchor spacing, filters), in tools/model/eval/.
 * after-cursor (bench/afterCursorSetMain.ts): positions from the other two's lines with code after the cursor as
 * auto-closing leaves it, so the gate's fit sees some (its code_after_cursor weight was 0 without them).
 */
const TUNED_SETS = ['heldout', 'external', 'after-cursor'];

/**
 * The frozen test split, tools/model/eval/frozen.jsonl: packages in neither the corpus nor the tuned-on sets, and
 * nothing is tuned on it; it is only reported, next to the tuned-on sets, as the number to trust. Its gate samples
 * are not written (bench/results/gate-samples.<set>.jsonl): `npm run gen:calibration` fits the gate on every such file
 * (and skips a frozen one if it is there), and gateThreshold.ts's threshold was read off them.
 */
const FROZEN_SET = 'frozen';
const isFrozenSet = (set: string) => set === FROZEN_SET;

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => flagValue(argv, name);
  const args = (name: string) => argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]] : []));
  const root = packageRoot(__dirname);
  if (!argv.includes('--no-oracle')) {
    const oracle = await oracleReport(root);
    fs.writeFileSync(path.join(root, 'bench', 'results', 'oracle.json'), `${JSON.stringify(oracle, null, 2)}\n`);
    if (argv.includes('--oracle')) return;
  }
  const modelDir = arg('model') ?? defaultModelDir(root);
  const evalDir = path.join(root, 'tools', 'model', 'eval');
  const defaults = [...TUNED_SETS, FROZEN_SET].map((f) => path.join(evalDir, `${f}.jsonl`)).filter((f) => fs.existsSync(f));
  const dataFiles = args('data').length > 0 ? args('data') : defaults;
  const limit = Number(arg('limit') ?? Infinity);
  const engine = await Engine.load(modelDir, { threads: Number(arg('threads') ?? 2) });
  const outDir = path.join(root, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  if (!argv.includes('--no-generate')) {
    // Generate from Selection on held-out functions (bench/qualityGenerate.ts).
    // On heldout and external only, as before the frozen split and after-cursor were added (its numbers stay
    // comparable; after-cursor's positions come from their lines).
    const tuned = dataFiles.filter((f) => !isFrozenSet(path.basename(f, '.jsonl')) && path.basename(f, '.jsonl') !== 'after-cursor');
    const generate = await generateReport(engine, tuned, { limit: Number(arg('generate-limit') ?? 150), outDir, log: console.log });
    const out = { date: new Date().toISOString(), model: path.basename(modelDir), onnx: path.basename(engine.info.onnxFile), ...generate };
    fs.writeFileSync(path.join(outDir, 'generate-quality.json'), `${JSON.stringify(out, null, 2)}\n`);
    if (argv.includes('--generate')) {
      await engine.dispose();
      return;
    }
  }
  const cal = readCalibration(modelDir);
  const useCalibration = !argv.includes('--no-calibration');
  const settings = defaultCompletionSettings();
  const minConfidence = Number(arg('min-confidence') ?? settings.minConfidence);
  // Every suggestion is scored and kept here; the gate's threshold is applied below, so one run gives the whole curve.
  Object.assign(settings, { prefetch: false, minConfidence: 0 });
  const traits: ModelTraits = {
    contextTokens: engine.info.contextLength,
    charsPerToken: engine.info.charsPerToken,
    // Always scored (the features do not depend on the calibration); --no-calibration only leaves the gate out of the numbers.
    calibration: cal.calibration,
  };
  const template = pickFimTemplate(engine.info.specialTokens);
  // One refiner for the run, its grammars loaded before the first sample (the editor loads them lazily).
  const syntax = argv.includes('--no-syntax') ? null : new SyntaxRefiner({ log: (line) => console.error(line) });
  for (const lang of Object.values(LANGUAGE_IDS)) await syntax?.ready(lang);
  const report: Record<string, unknown> = {
    date: new Date().toISOString(),
    model: path.basename(modelDir),
    onnx: path.basename(engine.info.onnxFile),
    calibration: useCalibration ? cal.source : 'none',
    syntax: syntax ? 'tree-sitter' : 'off',
    min_confidence: minConfidence,
    chars_per_token: round(engine.info.charsPerToken, 3),
    fim_template: template?.family ?? null,
    sets: {},
  };
  for (const file of dataFiles) {
    const set = path.basename(file, '.jsonl');
    const samples = readEvalSamples(file, limit);
    const results: GateSample[] = [];
    const fills: number[] = [];
    const examples: Record<string, unknown>[] = [];
    for (const s of samples) {
      // A fresh service per position: the cache and in-flight reuse must not carry one sample into the next.
      const service = new CompletionService(
        engine,
        () => template,
        () => settings,
        () => traits,
        syntax,
      );
      const text = s.prefix + s.suffix;
      const languageId = LANGUAGE_IDS[s.language] ?? s.language;
      const t0 = performance.now();
      const out = await completeSample(service, s);
      const ms = performance.now() - t0;
      if (out.fill !== undefined) fills.push(out.fill);
      const item = out.items[0] ?? '';
      const suggested = item.trim() !== '';
      results.push({
        set,
        language: s.language,
        kind: s.kind ?? 'mid-line',
        path: s.path,
        suggested,
        suggestion: item,
        confidence: suggested && useCalibration ? out.confidence : null,
        features: suggested ? (out.features ?? null) : null,
        exact: suggested && exactRestOfLine(item, s.expected),
        firstWord: suggested && firstWordRight(item, s.expected),
        similarity: suggested ? editSimilarity(firstLine(item), s.expected.trimEnd()) : 0,
        addsParseError: suggested && syntax ? addsParseError(syntax, languageId, text, s.prefix.length, item) : null,
        ms,
      });
      if (examples.length < 12)
        examples.push({ path: s.path, expected: s.expected, got: item, confidence: out.confidence === null ? null : round(out.confidence, 3) });
    }
    // The frozen split's gate samples are not written: `npm run gen:calibration` fits the gate on every
    // gate-samples.<set>.jsonl (and gateThreshold.ts's threshold was read off them), so they would tune on it.
    if (!isFrozenSet(set)) fs.writeFileSync(path.join(outDir, `gate-samples.${set}.jsonl`), `${results.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const byLanguage: Record<string, unknown> = {};
    for (const lang of ['all', ...new Set(results.map((r) => r.language))]) {
      const rs = results.filter((r) => lang === 'all' || r.language === lang);
      byLanguage[lang] = summarize(rs, minConfidence, useCalibration);
    }
    (report.sets as Record<string, unknown>)[set] = {
      data: path.relative(root, file),
      split: isFrozenSet(set) ? 'frozen: not tuned on, reported only' : 'tuned on',
      n: samples.length,
      median_ms: round(median(results.map((r) => r.ms))),
      prompt_fill: { median: round(median(fills), 3), min: round(Math.min(...fills), 3) },
      by_language: byLanguage,
      curve: gateCurve(
        results.map((r) => ({ confidence: r.confidence, exact: r.exact })),
        results.length,
        THRESHOLDS,
      ).map((p) => ({ threshold: p.threshold, shown: round(p.shown, 4), precision: round(p.precision, 4) })),
      examples,
    };
  }
  await engine.dispose();
  fs.writeFileSync(path.join(outDir, 'quality.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report, null, 2));
  console.log(`\nmodel ${report.model}, calibration ${report.calibration}, min confidence ${minConfidence}`);
  console.log(
    '\n| set | language | n | shown (95% interval) | precision (95% interval) | first word right | edit similarity | adds a parse error | precision, no gate (95%) | shown, no gate (95%) |\n|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const [set, r] of Object.entries(report.sets as Record<string, { by_language: Record<string, Summary> }>))
    for (const [lang, q] of Object.entries(r.by_language))
      console.log(
        `| ${isFrozenSet(set) ? `${set} (not tuned on)` : set} | ${lang} | ${q.n} | ${pct(q.shown)} (${range(q.shown_95)}) | ${pct(q.precision)} (${range(q.precision_95)}) | ${pct(q.first_word_right)} | ${q.edit_similarity.toFixed(3)} | ${q.adds_parse_error} | ${pct(q.ungated.precision)} (${range(q.ungated.precision_95)}) | ${pct(q.ungated.shown)} (${range(q.ungated.shown_95)}) |`,
      );
}

/** Whether inserting `item` at `cursor` raises the parse-error count of the document text (an independent check of the refiner). */
function addsParseError(syntax: SyntaxRefiner, languageId: string, text: string, cursor: number, item: string): boolean | null {
  const lineStart = text.lastIndexOf('\n', cursor - 1) + 1;
  const lineEnd = text.indexOf('\n', cursor) < 0 ? text.length : text.indexOf('\n', cursor);
  const w = {
    languageId,
    prefix: text.slice(0, lineStart),
    linePrefix: text.slice(lineStart, cursor),
    lineSuffix: text.slice(cursor, lineEnd),
    suffix: text.slice(lineEnd),
  };
  const before = syntax.windowErrors(w);
  const after = syntax.windowErrors({ ...w, linePrefix: w.linePrefix + item });
  return before === null || after === null ? null : after > before;
}

interface Summary {
  n: number;
  shown: number;
  /** The shown rate's 95% Wilson interval (over all positions). */
  shown_95: [number, number];
  precision: number;
  /** The precision's 95% Wilson interval. */
  precision_95: [number, number];
  first_word_right: number;
  edit_similarity: number;
  /** Shown suggestions whose insertion raises the parse-error count. */
  adds_parse_error: number;
  ungated: { shown: number; shown_95: [number, number]; precision: number; precision_95: [number, number]; adds_parse_error: number };
}

/** Shown rate over all positions; precision, first-word and similarity among the shown suggestions. */
function summarize(rs: GateSample[], minConfidence: number, gated: boolean): Summary {
  const suggested = rs.filter((r) => r.suggested);
  const shown = suggested.filter((r) => !gated || (r.confidence ?? 1) >= minConfidence);
  const share = (xs: GateSample[], f: (r: GateSample) => boolean) => (xs.length ? round(xs.filter(f).length / xs.length, 4) : 0);
  return {
    n: rs.length,
    shown: rs.length ? round(shown.length / rs.length, 4) : 0,
    shown_95: wilson(shown.length, rs.length),
    precision: share(shown, (r) => r.exact),
    precision_95: wilson(shown.filter((r) => r.exact).length, shown.length),
    first_word_right: share(shown, (r) => r.firstWord),
    edit_similarity: shown.length ? round(shown.reduce((a, r) => a + r.similarity, 0) / shown.length, 4) : 0,
    adds_parse_error: shown.filter((r) => r.addsParseError).length,
    ungated: {
      shown: rs.length ? round(suggested.length / rs.length, 4) : 0,
      shown_95: wilson(suggested.length, rs.length),
      precision: share(suggested, (r) => r.exact),
      precision_95: wilson(suggested.filter((r) => r.exact).length, suggested.length),
      adds_parse_error: suggested.filter((r) => r.addsParseError).length,
    },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const range = ([lo, hi]: [number, number]) => `${(lo * 100).toFixed(1)}-${pct(hi)}`;

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
