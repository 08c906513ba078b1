// `npm run eval:server-quality [-- --positions N]`: what a team gets through each server protocol next to the local
// engine, on the same held-out positions (tools/model/eval/heldout.jsonl, code the model never saw): the shipped
// default model locally (int8 ONNX, its own calibration) and served by a real llama-server (scripts/llama-server.js,
// the same weights as a Q8_0 GGUF), each through the editor's pipeline (CompletionService: context, FIM prompt,
// filters, tree-sitter, the confidence gate) with the inline preset as shipped, automatic trigger. Paths:
// - local: the engine in this process;
// - /infill: llama.cpp builds its own prompt from Ghostline's parts (text);
// - /completion ids, /v1/completions ids: Ghostline's prompt as the local tokenizer's ids (what Ghostline sends
//   when the connect-time check finds the model's vocabulary split another way, as for this GGUF);
// - /v1/completions text: Ghostline's prompt as text (re-tokenized by the server's preset).
// The gate: the local model's calibration for the local path and wherever the server runs the same model with
// the same tokens (ids), the generic calibration elsewhere, as the editor picks (vscode/backendRouter.ts).
// Reported per path: shown (the gate at ghostline.inline.minConfidence) and precision (the rest of the line
// exactly right), with 95% Wilson intervals, and without the gate, and how often the suggestion equals the
// local one. Writes bench/results/server-quality.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GENERIC_CALIBRATION } from '../src/completion/gate/genericCalibration';
import type { Generator } from '../src/completion/generator';
import { modelTraits } from '../src/completion/modelTraits';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import type { ModelTraits } from '../src/completion/types';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { probeServer } from '../src/servers/probeServer';
import { loadPromptTokenizer } from '../src/servers/promptTokenizer';
import { ServerGenerator } from '../src/servers/serverGenerator';
import { exactRestOfLine } from './qualityMetrics';
import { completeEachFresh, type EvalSample, LANGUAGE_IDS, readEvalSamples } from './evalSet';
import { round, wilson } from './stats';

interface Outcome {
  suggestion: string;
  confidence: number | null;
  exact: boolean;
}

async function runPath(generator: Generator, traits: ModelTraits, samples: EvalSample[], syntax: SyntaxRefiner, template: ReturnType<typeof pickFimTemplate>) {
  // The gate is applied below from the returned confidence, so every suggestion comes back (minConfidence 0).
  const settings = { ...defaultCompletionSettings(), prefetch: false, minConfidence: 0 };
  const outcomes = await completeEachFresh({ generator, template, settings, traits, syntax }, samples);
  return outcomes.map((r, i): Outcome => {
    const suggestion = r.items[0] ?? '';
    return { suggestion, confidence: r.confidence, exact: suggestion.trim() !== '' && exactRestOfLine(suggestion, samples[i].expected) };
  });
}

function summary(rs: Outcome[], local: Outcome[], minConfidence: number) {
  const suggested = rs.filter((r) => r.suggestion.trim() !== '');
  const shown = suggested.filter((r) => r.confidence === null || r.confidence >= minConfidence);
  const right = shown.filter((r) => r.exact).length;
  return {
    n: rs.length,
    shown: round(shown.length / rs.length, 4),
    precision: shown.length ? round(right / shown.length, 4) : null,
    precision_95: wilson(right, shown.length),
    ungated: {
      shown: round(suggested.length / rs.length, 4),
      precision: suggested.length ? round(suggested.filter((r) => r.exact).length / suggested.length, 4) : null,
    },
    same_as_local: round(rs.filter((r, i) => r.suggestion === local[i].suggestion).length / rs.length, 4),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const root = packageRoot(__dirname);
  const n = Number(arg('positions') ?? 150);
  const log = (s: string) => console.error(`[server-quality] ${s}`);
  const samples = readEvalSamples(path.join(root, 'tools', 'model', 'eval', 'heldout.jsonl'), n);
  const { startLlamaServer } = require(path.join(root, 'scripts', 'llama-server.js')) as {
    startLlamaServer: (o?: { parallel?: number; weights?: 'f32' | 'q8_0'; extraArgs?: string[] }) => Promise<{ url: string; stop: () => Promise<void> }>;
  };
  const modelDir = defaultModelDir(root);
  const engine = await Engine.load(modelDir);
  const template = pickFimTemplate(engine.info.specialTokens);
  const own = modelTraits(engine.info);
  const syntax = new SyntaxRefiner();
  for (const lang of Object.values(LANGUAGE_IDS)) await syntax.ready(lang);
  const minConfidence = defaultCompletionSettings().minConfidence;
  const server = await startLlamaServer({ parallel: 1, weights: 'q8_0', extraArgs: ['--alias', 'default'] });
  const tok = loadPromptTokenizer(modelDir);
  const context = { contextTokens: engine.info.contextLength };
  const generic: ModelTraits = { ...context, calibration: GENERIC_CALIBRATION, calibrationSource: 'generic (server)' };
  // Set up as the editor sets them up: ids (the connect-time check's verdict for this GGUF), and a grammar to
  // steer token healing where the probe finds llama.cpp's server (its /v1 routes too).
  const served = await probeServer({ kind: 'openai', url: server.url, model: 'default', timeoutMs: 10_000 });
  const idsSetup = { tokenIds: tok, grammar: served.llamaCpp };
  const paths: [string, Generator, ModelTraits][] = [
    ['local', engine, own],
    ['/infill', new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 60_000 }), generic],
    ['/completion ids', new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 60_000 }, idsSetup), own],
    ['/v1/completions ids', new ServerGenerator({ kind: 'openai', url: server.url, model: 'default', timeoutMs: 60_000 }, idsSetup), own],
    ['/v1/completions text', new ServerGenerator({ kind: 'openai', url: server.url, model: 'default', timeoutMs: 60_000 }), generic],
  ];
  const results: Record<string, Outcome[]> = {};
  try {
    for (const [name, generator, traits] of paths) {
      log(`${name}: ${samples.length} positions`);
      results[name] = await runPath(generator, traits, samples, syntax, template);
    }
  } finally {
    await server.stop();
    await engine.dispose();
    syntax.dispose();
  }
  const report = {
    command: `npm run eval:server-quality -- ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model },
    positions: samples.length,
    min_confidence: minConfidence,
    paths: Object.fromEntries(Object.entries(results).map(([k, rs]) => [k, summary(rs, results.local, minConfidence)])),
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'server-quality.json'), `${JSON.stringify(report, null, 2)}\n`);
  const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
  console.log('| path | shown | precision (95% interval) | no gate: shown / precision | same as local |');
  console.log('|---|---|---|---|---|');
  for (const [k, s] of Object.entries(report.paths)) {
    console.log(
      `| ${k} | ${pct(s.shown)} | ${pct(s.precision)} (${pct(s.precision_95[0])}-${pct(s.precision_95[1])}) | ${pct(s.ungated.shown)} / ${pct(s.ungated.precision)} | ${pct(s.same_as_local)} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
