// npm run bench:context-stability [-- --files N] [--lines N]
// How often the repository context's bytes change as the cursor moves from line to line: each change makes the
// model read everything after it again (the file's window, ~1,500 tokens on a long-context model), so this is what
// the KV cache can keep. Model-free, and the same counts on every run (its parses have a long deadline). The
// cursor walks lines of the files of the frozen cross-file set (tools/model/eval/crossfile.json.gz) with the editor-free sources on, and with a stand-in for the editor's
// language-server definitions source (context/simulatedDefinitions.ts) replaced per line or keeping earlier
// lines' definitions. Writes bench/results/context-stability.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type PromptModel, WorkspacePrompts } from '../src/cli/workspacePrompt';
import { MemoryFiles } from '../src/completion/context/repo/memoryFiles';
import { fimTemplateForFamily } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { packageRoot } from '../src/engine/host/defaultModel';
import { BENCH_PARSE_TIMEOUT_MS, documentAt, packageFiles, readCrossfileSet } from './context/crossfileSet';
import { holdsDeclaration } from './context/declarationCheck';
import { ContextChanges } from './context/contextChanges';
import { simulatedDefinitionsProvider } from './context/simulatedDefinitions';
import { LANGUAGE_IDS } from './evalSet';
import { flagValue } from './machine';
import { round } from './stats';

const CONFIGS = [
  { name: 'editor-free sources', definitions: null },
  { name: '+ definitions replaced per line', definitions: { keep: false } },
  { name: '+ definitions kept per file (the product)', definitions: { keep: true } },
] as const;

async function main() {
  const argv = process.argv.slice(2);
  const root = packageRoot(__dirname);
  const set = readCrossfileSet();
  const maxFiles = Number(flagValue(argv, 'files') ?? 80);
  const walk = Number(flagValue(argv, 'lines') ?? 40);
  // One walk per file of the set, around its first sample (the code the set's positions are in), in the set's order.
  const walks = new Map<string, (typeof set.samples)[number]>();
  for (const s of set.samples) if (!walks.has(`${s.package}\0${s.path}`)) walks.set(`${s.package}\0${s.path}`, s);
  const chosen = [...walks.values()].slice(0, maxFiles);
  const model: PromptModel = { template: fimTemplateForFamily('qwen2.5-coder'), traits: { contextTokens: 32768, charsPerToken: 3.2 } };
  const settings = { ...defaultCompletionSettings(), prefetch: false, minConfidence: 0 };
  const results: Record<string, unknown> = {};
  for (const config of CONFIGS) {
    let moves = 0;
    const changes = new ContextChanges();
    const contextChars: number[] = [];
    let reached = 0;
    let found = 0;
    const t0 = performance.now();
    for (const s of chosen) {
      const files = new MemoryFiles(packageFiles(set, s.package));
      const more = config.definitions ? [simulatedDefinitionsProvider(files, config.definitions.keep)] : [];
      const prompts = new WorkspacePrompts(files, model, {
        settings,
        sources: { definitions: config.definitions !== null, ring: false },
        more,
        parseTimeoutMs: BENCH_PARSE_TIMEOUT_MS,
      });
      const text = packageFiles(set, s.package).get(s.path) ?? '';
      const lines = text.split('\n');
      const first = Math.max(0, Math.min(s.line - Math.floor(walk / 2), lines.length - walk));
      changes.reset();
      for (let line = first; line < Math.min(lines.length, first + walk); line++) {
        // At the sample's line the user is typing it (cut at the sample's cursor): is the declaration it uses there?
        const doc = line === s.line ? documentAt(text, s) : { text, line, character: lines[line].length };
        const p = await prompts.at(s.path, doc.text, doc.line, doc.character, LANGUAGE_IDS[s.language] ?? s.language);
        if (line === s.line) {
          reached++;
          if (p.context.some((c) => s.definedIn.includes(c.path) && holdsDeclaration(c.text, s.name))) found++;
        }
        contextChars.push(p.context.map((c) => `${c.path}\n${c.text}`).join('\n\n').length);
        if (line > first) moves++;
        changes.note(p.context);
      }
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    results[config.name] = {
      moves,
      changes: changes.changes,
      changes_per_100_moves: round((100 * changes.changes) / Math.max(1, moves), 1),
      // Characters after the first changed one: what the model reads again (plus the file's window after them).
      first_changed_chunk_by_source: changes.bySource,
      median_chars_after_change: sorted(changes.charsAfter)[Math.floor(changes.charsAfter.length / 2)] ?? 0,
      median_context_chars: sorted(contextChars)[Math.floor(contextChars.length / 2)] ?? 0,
      // What holding the context costs in relevance: the sample's declaration in the context when the walk reaches it.
      samples_reached: reached,
      recall_at_samples: round(found / Math.max(1, reached), 4),
      seconds: round((performance.now() - t0) / 1000, 1),
    };
    console.error(`${config.name}: ${changes.changes} changes in ${moves} moves`);
  }
  const report = {
    command: `npm run bench:context-stability -- ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    set: 'tools/model/eval/crossfile.json.gz',
    files: chosen.length,
    lines_per_file: walk,
    budget: 'long context (Qwen2.5-Coder layout), extraContextChars 2000 (default); ring off (no history)',
    results,
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'context-stability.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log('| sources | moves | context changed | per 100 moves | median chars after the change | recall at the samples |\n|---|---|---|---|---|---|');
  for (const [name, r] of Object.entries(results) as [string, Record<string, number>][])
    console.log(`| ${name} | ${r.moves} | ${r.changes} | ${r.changes_per_100_moves} | ${r.median_chars_after_change} | ${r.recall_at_samples} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
