// npm run eval:quality [-- --model DIR] [--limit N]: rest-of-line quality of a model on the held-out set,
// through the engine and the same prompt builder as the editor. Writes bench/results/quality.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { documentContext, positionAt, textSource } from '../src/completion/context/documentContext';
import { buildPrompt } from '../src/completion/prompt/buildPrompt';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { INLINE_PRESET } from '../src/completion/presets';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { Engine } from '../src/engine/worker/engine';
import { editSimilarity } from './editSimilarity';
import { median, round } from './stats';

interface Sample {
  path: string;
  language: string;
  prefix: string;
  suffix: string;
  expected: string;
}

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const root = packageRoot(__dirname);
  // As the editor does (the inline preset heals the prompt's last token); --no-token-healing for an A/B.
  const tokenHealing = INLINE_PRESET.tokenHealing && !argv.includes('--no-token-healing');
  const modelDir = arg('model') ?? defaultModelDir(root);
  const data = arg('data') ?? path.join(root, 'tools', 'model', 'eval', 'heldout.jsonl');
  const limit = Number(arg('limit') ?? Infinity);
  const samples = fs
    .readFileSync(data, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Sample)
    .slice(0, limit);
  const engine = await Engine.load(modelDir, { threads: Number(arg('threads') ?? 2) });
  const template = pickFimTemplate(engine.info.specialTokens);
  const budget = defaultCompletionSettings().budget;
  const modes = { with_suffix: template, prefix_only: null } as const;
  const results: Record<string, { exact_match: number; edit_similarity: number; median_ms: number; n: number }> = {};
  const examples: { path: string; expected: string; with_suffix: string; prefix_only: string }[] = [];
  for (const [mode, tpl] of Object.entries(modes)) {
    let exact = 0;
    let sim = 0;
    const ms: number[] = [];
    for (const [k, s] of samples.entries()) {
      const text = s.prefix + s.suffix;
      const ctx = documentContext(textSource(text), positionAt(text, s.prefix.length), budget);
      const prompt = buildPrompt(ctx, tpl, [], s.path).prompt;
      const r = await engine.generate(prompt, { maxNewTokens: 48, maxLines: 1, stop: tpl ? tpl.stopTokens : [], tokenHealing });
      const got = r.text.trimEnd();
      const want = s.expected.trimEnd();
      if (got === want) exact++;
      sim += editSimilarity(got, want);
      ms.push(r.stats.totalMs);
      if (k < 8) {
        examples[k] ??= { path: s.path, expected: want, with_suffix: '', prefix_only: '' };
        examples[k][mode as 'with_suffix' | 'prefix_only'] = got;
      }
    }
    results[mode] = {
      exact_match: round(exact / samples.length, 4),
      edit_similarity: round(sim / samples.length, 4),
      median_ms: round(median(ms)),
      n: samples.length,
    };
  }
  await engine.dispose();
  const out = {
    date: new Date().toISOString(),
    model: path.basename(modelDir),
    onnx: path.basename(engine.info.onnxFile),
    data: path.relative(root, data),
    fim_template: template?.family ?? null,
    results,
    examples,
  };
  const file = path.join(root, 'bench', 'results', 'quality.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out, null, 2));
  console.log('\n| cursor context | exact match | edit similarity | median ms |\n|---|---|---|---|');
  for (const [mode, r] of Object.entries(results))
    console.log(`| ${mode.replace('_', ' ')} | ${(r.exact_match * 100).toFixed(1)}% | ${r.edit_similarity.toFixed(3)} | ${r.median_ms} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
