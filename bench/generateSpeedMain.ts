// `npm run bench:generate-speed [-- --limit N --shapes 0.5b,1.5b --threads T]`: how long Generate from Selection
// makes the user wait on real model shapes. The default model writes the bodies of held-out functions
// (bench/qualityGenerate.ts's set, spread over its languages) through generateForSelection, as the command does; its
// lengths are recorded (tokens in all, tokens to the first complete line). The random-weight checkpoints of
// Qwen2.5-Coder 0.5B and 1.5B (converted to q4, bench/qwenPath.ts) then write as many tokens for the same
// selections (content stops off: random weights never end a line where code would; the time budget stays;
// prompt lookup off, as in bench:pause-latency, since random weights accept no draft), and the time to the recorded
// first line and to the whole result is measured. Writes
// bench/results/generate-speed.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { positionAt, textSource } from '../src/completion/context/documentContext';
import { generateForSelection } from '../src/completion/selection/generateForSelection';
import type { BackendHooks, Generator } from '../src/completion/generator';
import { GENERATE_PRESET } from '../src/completion/presets';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import type { DecodeOptions } from '../src/engine/shared/decodeOptions';
import type { Prompt } from '../src/engine/shared/prompt';
import type { GenerateResult } from '../src/engine/shared/types';
import { Engine } from '../src/engine/worker/engine';
import { generateInputsFor, type HeldOutFunction, heldOutFunctions } from './qualityGenerate';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { median, percentile, round } from './stats';

/** One generation's timing: tokens, and when the first complete line and the whole result came. */
interface Timing {
  path: string;
  promptTokens: number;
  tokens: number;
  firstLineTokens: number | null;
  firstLineMs: number | null;
  totalMs: number;
  finish: string;
}

/**
 * The engine, counting streamed tokens: records the token at which the first complete line came (the
 * default model), or imposes the recorded length and notes when that token came (a shape).
 */
class CountingGenerator implements Generator {
  impose: { tokens: number; firstLineTokens: number | null } | null = null;
  last: { firstLineTokens: number | null; firstLineMs: number | null } = { firstLineTokens: null, firstLineMs: null };

  constructor(private readonly engine: Engine) {}

  async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks: BackendHooks = {}): Promise<GenerateResult> {
    const t0 = performance.now();
    const imposed = this.impose;
    // Prompt lookup off on a shape: random weights never accept a draft, so each would only add a verify step.
    const opts = imposed ? { ...options, maxNewTokens: Math.max(1, imposed.tokens), maxLines: 0, stop: [], ignoreEos: true, speculativeTokens: 0 } : options;
    let text = '';
    let tokens = 0;
    this.last = { firstLineTokens: null, firstLineMs: null };
    const r = await this.engine.generate(prompt, opts, {
      ...hooks,
      onText: (d) => {
        tokens++;
        text += d;
        const reached = imposed ? imposed.firstLineTokens !== null && tokens === imposed.firstLineTokens : /\S[^\n]*\n/.test(text);
        if (reached && this.last.firstLineMs === null) this.last = { firstLineTokens: tokens, firstLineMs: performance.now() - t0 };
        hooks.onText?.(d);
      },
    });
    return r;
  }
}

async function run(engine: Engine, functions: HeldOutFunction[], syntax: SyntaxRefiner, impose: Timing[] | null): Promise<Timing[]> {
  const gen = new CountingGenerator(engine);
  const inputs = generateInputsFor(engine, gen, syntax);
  const out: Timing[] = [];
  for (const [i, f] of functions.entries()) {
    gen.impose = impose ? { tokens: impose[i].tokens, firstLineTokens: impose[i].firstLineTokens } : null;
    const t0 = performance.now();
    const o = await generateForSelection(inputs, {
      doc: textSource(f.doc),
      selection: { start: positionAt(f.doc, f.selStart), end: positionAt(f.doc, f.selEnd) },
      languageId: f.language,
      path: f.path,
    });
    out.push({
      path: f.path,
      promptTokens: o.stats.promptTokens,
      tokens: o.stats.generatedTokens,
      firstLineTokens: gen.last.firstLineTokens,
      firstLineMs: gen.last.firstLineMs === null ? null : round(gen.last.firstLineMs),
      totalMs: round(performance.now() - t0),
      finish: o.finishReason,
    });
  }
  return out;
}

function summary(ts: Timing[]) {
  const first = ts.flatMap((t) => (t.firstLineMs === null ? [] : [t.firstLineMs]));
  const total = ts.map((t) => t.totalMs);
  const decodeRate = ts.reduce((a, t) => a + t.tokens, 0) / (total.reduce((a, b) => a + b, 0) / 1000);
  return {
    n: ts.length,
    prompt_tokens_median: median(ts.map((t) => t.promptTokens)),
    tokens_median: median(ts.map((t) => t.tokens)),
    first_line_ms: { median: round(median(first)), p90: round(percentile(first, 90)), n: first.length },
    total_ms: { median: round(median(total)), p90: round(percentile(total, 90)) },
    tokens_per_s_overall: round(decodeRate),
    cut_by_time_budget: ts.filter((t) => t.finish === 'time').length,
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const root = packageRoot(__dirname);
  const limit = Number(arg('limit') ?? 12);
  const shapes = shapesArg(arg('shapes'));
  const threads = arg('threads') ? Number(arg('threads')) : undefined;
  const log = (s: string) => console.error(`[generate-speed] ${s}`);
  const evalDir = path.join(root, 'tools', 'model', 'eval');
  const all = await heldOutFunctions(['heldout.jsonl', 'external.jsonl'].map((f) => path.join(evalDir, f)).filter((f) => fs.existsSync(f)));
  // Spread over the whole set (its languages come in runs), in a fixed order.
  const step = Math.max(1, Math.floor(all.length / limit));
  const functions = all.filter((_, i) => i % step === 0).slice(0, limit);
  const syntax = new SyntaxRefiner();
  for (const lang of new Set(functions.map((f) => f.language))) await syntax.ready(lang);
  const loadavg = os.loadavg();

  log(`default model, ${functions.length} functions (records the lengths)`);
  const defaultEngine = await Engine.load(defaultModelDir(root), { threads });
  const recorded = await run(defaultEngine, functions, syntax, null);
  await defaultEngine.dispose();
  const runs: Record<string, Timing[]> = { default: recorded };
  for (const shape of shapes) {
    const { converted } = ensureConvertedShape(root, log, shape);
    log(`${shape} shape with the default model's lengths`);
    const engine = await Engine.load(converted, { threads });
    runs[shape] = await run(engine, functions, syntax, recorded);
    await engine.dispose();
  }
  syntax.dispose();
  const out = {
    command: `npm run bench:generate-speed -- ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadavg_at_start: loadavg, loadavg_at_end: os.loadavg() },
    preset: { maxNewTokens: GENERATE_PRESET.maxNewTokens, timeBudgetMs: GENERATE_PRESET.timeBudgetMs },
    summary: Object.fromEntries(Object.entries(runs).map(([k, ts]) => [k, summary(ts)])),
    runs,
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'generate-speed.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(
    '| model | functions | prompt tokens (median) | tokens (median) | first line p50 / p90 | whole result p50 / p90 | tokens/s | cut by the time budget |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [k, s] of Object.entries(out.summary)) {
    console.log(
      `| ${k} | ${s.n} | ${s.prompt_tokens_median} | ${s.tokens_median} | ${s.first_line_ms.median} / ${s.first_line_ms.p90} ms | ` +
        `${s.total_ms.median} / ${s.total_ms.p90} ms | ${s.tokens_per_s_overall} | ${s.cut_by_time_budget} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
