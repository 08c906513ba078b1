// npm run eval:context [-- --limit N] [--model DIR] [--no-model] [--threads N] [--in-file-limit N]
// Repository context, measured without trusting any one model (definition recall) and with the bundled model
// (exact match, the gate, the copy evaluation), on the frozen cross-file set tools/model/eval/crossfile.json.gz.
// Writes bench/results/context.json and prints the tables of bench/README.md's "Repository context" section.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promptModel, type PromptModel, WorkspacePrompts } from '../src/cli/workspacePrompt';
import { MemoryFiles } from '../src/completion/context/repo/memoryFiles';
import type { ContextSource } from '../src/completion/context/repo/snippet';
import { gateThreshold } from '../src/completion/gate/gateThreshold';
import { readCalibration } from '../src/completion/gate/readCalibration';
import { fimTemplateForFamily } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import type { CompletionSettings } from '../src/completion/types';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { BENCH_PARSE_TIMEOUT_MS, type CrossfileSample, type CrossfileSet, documentAt, packageFiles, readCrossfileSet } from './context/crossfileSet';
import { holdsDeclaration } from './context/declarationCheck';
import { completeEachFresh, LANGUAGE_IDS, readEvalSamples } from './evalSet';
import { flagValue } from './machine';
import { exactRestOfLine } from './qualityMetrics';
import { round, wilson } from './stats';

/** The source mixes compared: each alone, the ring alone (with a simulated history), and everything an editor-free run has. */
const CONFIGS: { name: string; sources: Partial<Record<ContextSource, boolean>> }[] = [
  { name: 'none', sources: { imports: false, similar: false, ring: false } },
  { name: 'ring', sources: { imports: false, similar: false, ring: true } },
  { name: 'imports', sources: { imports: true, similar: false, ring: false } },
  { name: 'similar', sources: { imports: false, similar: true, ring: false } },
  { name: 'all', sources: { imports: true, similar: true, ring: true } },
];

/** Copy-bias strengths tried with the bundled model (0: off). */
const COPY_BIASES = [0, 1.5, 3];

/** Budgets the recall is measured at: the bundled model's window, and a long-context model at two extraChars settings. */
interface Budget {
  name: string;
  model: PromptModel;
  extraChars: number;
}

/** The ring a user who visited the other files of the same folder first would have (oldest first, nearest last). */
function simulateHistory(prompts: WorkspacePrompts, files: Map<string, string>, current: string): void {
  const dir = current.includes('/') ? current.slice(0, current.lastIndexOf('/')) : '';
  const siblings = [...files.keys()].filter((p) => p !== current && (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '') === dir).sort();
  for (const p of siblings) prompts.ring.add(p, (files.get(p) ?? '').split('\n'), 0);
}

function settingsWith(extraChars: number): CompletionSettings {
  return { ...defaultCompletionSettings(), extraContextChars: extraChars, prefetch: false, minConfidence: 0 };
}

async function recallReport(set: CrossfileSet, samples: CrossfileSample[], budgets: Budget[]) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const budget of budgets) {
    out[budget.name] = {};
    for (const config of CONFIGS) {
      let hits = 0;
      const byLanguage: Record<string, { n: number; hits: number }> = {};
      const contextChars: number[] = [];
      for (const s of samples) {
        const files = packageFiles(set, s.package);
        const prompts = new WorkspacePrompts(new MemoryFiles(files), budget.model, {
          sources: config.sources,
          settings: settingsWith(budget.extraChars),
          parseTimeoutMs: BENCH_PARSE_TIMEOUT_MS,
        });
        if (config.sources.ring) simulateHistory(prompts, files, s.path);
        const doc = documentAt(files.get(s.path) ?? '', s);
        const p = await prompts.at(s.path, doc.text, doc.line, doc.character, LANGUAGE_IDS[s.language] ?? s.language);
        const hit = p.context.some((c) => s.definedIn.includes(c.path) && holdsDeclaration(c.text, s.name));
        contextChars.push(p.context.reduce((n, c) => n + c.text.length, 0));
        if (hit) hits++;
        byLanguage[s.language] ??= { n: 0, hits: 0 };
        const lang = byLanguage[s.language];
        lang.n++;
        if (hit) lang.hits++;
      }
      const ci = wilson(hits, samples.length);
      out[budget.name][config.name] = {
        recall: round(hits / samples.length, 4),
        recall_95: [round(ci[0], 4), round(ci[1], 4)],
        by_language: Object.fromEntries(Object.entries(byLanguage).map(([k, v]) => [k, round(v.hits / v.n, 4)])),
        median_context_chars: contextChars.sort((a, b) => a - b)[Math.floor(contextChars.length / 2)] ?? 0,
      };
      console.error(`recall ${budget.name} ${config.name}: ${(hits / samples.length).toFixed(3)}`);
    }
  }
  return out;
}

/** The identifier a completion starts with (the copy evaluation's unit). */
function leadingIdentifier(text: string): string | null {
  return /^\s*([A-Za-z_$][A-Za-z0-9_$]*)/.exec(text)?.[1] ?? null;
}

/** The model in this process, its prompt shape and calibration, tree-sitter, and the gate's threshold as the editor uses it. */
async function loadModel(modelDir: string, threads: number) {
  const engine = await Engine.load(modelDir, { threads });
  const model = await promptModel(modelDir);
  const cal = readCalibration(modelDir);
  const traits = { ...model.traits, calibration: cal.calibration };
  const syntax = new SyntaxRefiner();
  for (const lang of Object.values(LANGUAGE_IDS)) await syntax.ready(lang);
  return { engine, model, traits, syntax, threshold: gateThreshold(cal.calibration, defaultCompletionSettings().minConfidence) };
}

async function modelReport(set: CrossfileSet, samples: CrossfileSample[], modelDir: string, threads: number) {
  const { engine, model, traits, syntax, threshold } = await loadModel(modelDir, threads);
  const out: Record<string, unknown> = {};
  // Context off and on, each without and with the decode-time copy bias (issue 42: kept only if the numbers say so).
  const variants = CONFIGS.filter((c) => c.name === 'none' || c.name === 'all').flatMap((c) =>
    COPY_BIASES.map((bias) => ({ name: bias ? `${c.name}+copy${bias}` : c.name, sources: c.sources, copyBias: bias })),
  );
  for (const config of variants) {
    const settings = settingsWith(2000);
    settings.preset = { ...settings.preset, copyBias: config.copyBias } as typeof settings.preset;
    let exact = 0;
    let shown = 0;
    let shownExact = 0;
    const copy = { inContext: 0, inContextRight: 0, inFile: 0, inFileRight: 0 };
    for (const s of samples) {
      const files = packageFiles(set, s.package);
      const prompts = new WorkspacePrompts(
        new MemoryFiles(files),
        { ...model, traits },
        {
          sources: config.sources,
          settings,
          generator: engine,
          syntax,
          parseTimeoutMs: BENCH_PARSE_TIMEOUT_MS,
        },
      );
      if (config.sources.ring) simulateHistory(prompts, files, s.path);
      const doc = documentAt(files.get(s.path) ?? '', s);
      const languageId = LANGUAGE_IDS[s.language] ?? s.language;
      await prompts.gather(s.path, doc.text, doc.line, languageId);
      const { extra } = prompts.service.promptFor({ doc: textSourceOf(doc.text), cursor: doc, languageId, path: s.path, explicit: false });
      const r = await prompts.service.complete({ doc: textSourceOf(doc.text), cursor: doc, languageId, path: s.path, explicit: false });
      const item = r.items[0] ?? '';
      const right = item.trim() !== '' && exactRestOfLine(item, s.expected);
      if (right) exact++;
      const isShown = item.trim() !== '' && (r.confidence === null || r.confidence >= threshold);
      if (isShown) {
        shown++;
        if (right) shownExact++;
      }
      // Copy evaluation: the truth starts with an identifier that the prompt holds (context sections apart from the file).
      const want = leadingIdentifier(s.expected);
      if (s.kind === 'at-name' && want) {
        const before = doc.text
          .split('\n')
          .slice(0, doc.line + 1)
          .join('\n');
        const inContext = extra.some((c) => new RegExp(`\\b${want.replace(/\$/g, '\\$')}\\b`).test(c.text));
        const inFile = new RegExp(`\\b${want.replace(/\$/g, '\\$')}\\b`).test(before);
        const copied = leadingIdentifier(item) === want;
        if (inFile) {
          copy.inFile++;
          if (copied) copy.inFileRight++;
        } else if (inContext) {
          copy.inContext++;
          if (copied) copy.inContextRight++;
        }
      }
    }
    const n = samples.length;
    out[config.name] = {
      n,
      exact_match: round(exact / n, 4),
      exact_match_95: wilson(exact, n).map((x) => round(x, 4)),
      gate: { threshold: round(threshold, 4), shown: round(shown / n, 4), precision: shown ? round(shownExact / shown, 4) : null },
      copy: {
        name_in_file: copy.inFile,
        copied_from_file: copy.inFile ? round(copy.inFileRight / copy.inFile, 4) : null,
        name_only_in_context: copy.inContext,
        copied_from_context: copy.inContext ? round(copy.inContextRight / copy.inContext, 4) : null,
      },
    };
    console.error(
      `model ${config.name}: exact ${(exact / n).toFixed(3)}, shown ${(shown / n).toFixed(3)}, precision ${(shown ? shownExact / shown : 0).toFixed(3)}`,
    );
  }
  await engine.dispose();
  return out;
}

/**
 * The existing (in-file) eval sets with and without the copy bias: exact match, the gate's shown and precision, and
 * the copy evaluation (positions whose truth starts with an identifier the prefix holds: how often the suggestion
 * starts with it). No loss here is the condition for keeping the bias.
 */
async function inFileReport(modelDir: string, threads: number, limit: number) {
  const { engine, model, traits, syntax, threshold } = await loadModel(modelDir, threads);
  const root = packageRoot(__dirname);
  const out: Record<string, Record<string, unknown>> = {};
  for (const set of ['external', 'frozen']) {
    const samples = readEvalSamples(path.join(root, 'tools', 'model', 'eval', `${set}.jsonl`), limit);
    out[set] = {};
    for (const bias of COPY_BIASES) {
      const settings = settingsWith(0);
      settings.preset = { ...settings.preset, copyBias: bias } as typeof settings.preset;
      const parts = { generator: engine, template: model.template, settings, traits, syntax };
      const results = await completeEachFresh(parts, samples);
      let exact = 0;
      let shown = 0;
      let shownExact = 0;
      let copyN = 0;
      let copied = 0;
      results.forEach((r, i) => {
        const s = samples[i];
        const item = r.items[0] ?? '';
        const right = item.trim() !== '' && exactRestOfLine(item, s.expected);
        if (right) exact++;
        if (item.trim() !== '' && (r.confidence === null || r.confidence >= threshold)) {
          shown++;
          if (right) shownExact++;
        }
        const want = leadingIdentifier(s.expected);
        if (want && new RegExp(`(^|[^A-Za-z0-9_$])${want.replace(/\$/g, '\\$')}($|[^A-Za-z0-9_$])`).test(s.prefix)) {
          copyN++;
          if (leadingIdentifier(item) === want) copied++;
        }
      });
      const n = samples.length;
      out[set][bias ? `copy${bias}` : 'off'] = {
        n,
        exact_match: round(exact / n, 4),
        gate: { shown: round(shown / n, 4), precision: shown ? round(shownExact / shown, 4) : null },
        copy: { positions: copyN, identifier_right: copyN ? round(copied / copyN, 4) : null },
      };
      console.error(
        `in-file ${set} copy ${bias}: exact ${(exact / n).toFixed(3)}, shown ${(shown / n).toFixed(3)}, precision ${(shown ? shownExact / shown : 0).toFixed(3)}, copy ${copied}/${copyN}`,
      );
    }
  }
  await engine.dispose();
  return out;
}

function textSourceOf(text: string) {
  const lines = text.split('\n');
  return { lineCount: lines.length, lineAt: (i: number) => lines[i] ?? '' };
}

async function main() {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const set = readCrossfileSet();
  const limit = Number(flagValue(argv, 'limit') ?? Infinity);
  const samples = set.samples.slice(0, limit);
  const modelDir = flagValue(argv, 'model') ?? defaultModelDir(root);
  const bundled = await promptModel(defaultModelDir(root));
  // A long-context model's prompt shape (Qwen2.5-Coder's layout, 32k tokens, ~3.2 characters a token), no weights needed.
  const longContext: PromptModel = { template: fimTemplateForFamily('qwen2.5-coder'), traits: { contextTokens: 32768, charsPerToken: 3.2 } };
  const budgets: Budget[] = [
    { name: 'bundled model (512 tokens)', model: bundled, extraChars: 2000 },
    { name: 'long context, extraChars 2000 (default)', model: longContext, extraChars: 2000 },
    { name: 'long context, extraChars 6000', model: longContext, extraChars: 6000 },
  ];
  const t0 = performance.now();
  const recall = await recallReport(set, samples, budgets);
  const recallSeconds = (performance.now() - t0) / 1000;
  const threads = Number(flagValue(argv, 'threads') ?? 2);
  const model = argv.includes('--no-model') ? null : await modelReport(set, samples, modelDir, threads);
  const inFile = argv.includes('--no-model') ? null : await inFileReport(modelDir, threads, Number(flagValue(argv, 'in-file-limit') ?? 300));
  const report = {
    date: new Date().toISOString(),
    set: 'tools/model/eval/crossfile.json.gz',
    n: samples.length,
    packages: set.packages.map((p) => `${p.name}@${p.version}`),
    definition_recall: recall,
    recall_seconds: round(recallSeconds, 1),
    bundled_model: model ? { model: path.basename(modelDir), cross_file: model, in_file: inFile } : null,
  };
  const outDir = path.join(root, 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'context.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log('\n| budget | ring alone | imports | similar | all (no language server) | none |\n|---|---|---|---|---|---|');
  for (const [budget, r] of Object.entries(recall)) {
    const cell = (k: string) => {
      const v = r[k] as { recall: number; recall_95: number[] };
      return `${(v.recall * 100).toFixed(1)}% (${(v.recall_95[0] * 100).toFixed(0)}-${(v.recall_95[1] * 100).toFixed(0)})`;
    };
    console.log(`| ${budget} | ${cell('ring')} | ${cell('imports')} | ${cell('similar')} | ${cell('all')} | ${cell('none')} |`);
  }
  if (model) console.log(`\n${JSON.stringify({ cross_file: model, in_file: inFile }, null, 2)}`);
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
