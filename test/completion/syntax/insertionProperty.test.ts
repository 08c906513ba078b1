import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Parser } from '@vscode/tree-sitter-wasm';
import { positionsFromFile, rng } from '../../../bench/oracle/positions';
import { documentContext, positionAt, textSource } from '../../../src/completion/context/documentContext';
import { fitBudget } from '../../../src/completion/context/fitBudget';
import { defaultCompletionSettings } from '../../../src/completion/settings';
import { grammarWasm, loadLanguage, loadRuntime, runtimeWasm } from '../../../src/completion/syntax/grammarLoader';
import { grammarFor } from '../../../src/completion/syntax/languages';
import { SyntaxRefiner } from '../../../src/completion/syntax/syntaxRefiner';
import { checkWindow } from '../../../src/completion/syntax/syntaxWindow';
import { ROOT } from '../../helpers';

// Property (issue 23): in a file that parses without errors, the file's own next text at a cursor is valid
// code, so the syntax check must keep it whole or abstain; a drop or a cut is a wrong verdict. Real code
// only: the eval sets' regions (prefix + expected + suffix) and the repo's own sources.

const LANGUAGES = ['python', 'javascript', 'typescript'];

interface Source {
  name: string;
  language: string;
  text: string;
}

/** Trailing whitespace goes: positionsFromFile() trims it from the text it takes out, so the file is put back exactly. */
const normalize = (t: string) => t.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '');

function sources(): Source[] {
  const out: Source[] = [];
  for (const set of ['heldout', 'external']) {
    const rows = fs
      .readFileSync(path.join(ROOT, 'tools', 'model', 'eval', `${set}.jsonl`), 'utf8')
      .trim()
      .split('\n');
    rows.forEach((l, i) => {
      const r = JSON.parse(l) as { path: string; language: string; prefix: string; expected: string; suffix: string };
      out.push({ name: `${set}.jsonl#${i + 1} ${r.path}`, language: r.language, text: normalize(r.prefix + r.expected + r.suffix) });
    });
  }
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  for (const f of walk(path.join(ROOT, 'src')).sort()) {
    out.push({ name: path.relative(ROOT, f), language: 'typescript', text: normalize(fs.readFileSync(f, 'utf8')) });
  }
  return out;
}

const refiner = new SyntaxRefiner({ parseTimeoutMs: 5000 });
const parsers = new Map<string, Parser>();

before(async () => {
  const ts = await loadRuntime(runtimeWasm());
  for (const id of LANGUAGES) {
    assert.ok(await refiner.ready(id), id);
    const parser = new ts.Parser();
    parser.setLanguage(await loadLanguage(ts, grammarWasm(grammarFor(id)!.grammar)));
    parsers.set(id, parser);
  }
});

after(() => {
  refiner.dispose();
  for (const p of parsers.values()) p.delete();
});

/** The premise: no ERROR or MISSING node anywhere in the text. */
function parsesCleanly(s: Source): boolean {
  const tree = parsers.get(s.language)!.parse(s.text);
  try {
    return !!tree && !tree.rootNode.hasError;
  } finally {
    tree?.delete();
  }
}

test('property: the syntax check never drops or cuts a clean file’s own next text (mid-line, fresh line, block body)', (t) => {
  const random = rng(23);
  const settings = defaultCompletionSettings();
  const all = sources();
  const clean = all.filter(parsesCleanly);
  // One position of each kind per file; after-cursor is left out: its document lacks the rest of the line.
  const positions = clean.flatMap((s) =>
    positionsFromFile('property', s.name, s.language, s.text, 1, random)
      .filter((p) => p.kind !== 'after-cursor')
      .map((p) => {
        assert.equal(p.doc.slice(0, p.cursor) + p.truth + p.doc.slice(p.cursor), s.text, `${s.name}: the position is the file with a hole`);
        return p;
      }),
  );

  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  let windows = 0;
  for (const p of positions) {
    const doc = textSource(p.doc);
    const cursor = positionAt(p.doc, p.cursor);
    let previous = '';
    for (const contextTokens of [512, 4096]) {
      // As CompletionService.prepare() and runModel() build it (the oracle check's measured 2.91 characters a token).
      const fit = fitBudget(settings.budget, 0, contextTokens, settings.preset.maxNewTokens, 2.91);
      const check = checkWindow(doc, cursor, documentContext(doc, cursor, fit.budget), p.language);
      const key = JSON.stringify(check);
      if (key === previous) continue; // the same window gets the same verdict
      previous = key;
      windows++;
      // The pipeline does not judge prose (the cursor in a string or comment): kept.
      const out = check.prose ? p.truth : refiner.refine(p.truth, check.window);
      const outcome = check.prose ? 'prose' : refiner.lastOutcome;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (out === p.truth) continue;
      failures.push(
        `${p.path}:${cursor.line + 1}:${cursor.character + 1} [${p.kind}, ${contextTokens} tokens] ${outcome}\n` +
          `  cursor line ${JSON.stringify(check.window.linePrefix)} █ ${JSON.stringify(check.window.lineSuffix)}\n` +
          `  insertion   ${JSON.stringify(p.truth)}\n  returned    ${JSON.stringify(out)}`,
      );
    }
  }
  const kinds: Record<string, number> = {};
  for (const p of positions) kinds[p.kind] = (kinds[p.kind] ?? 0) + 1;
  t.diagnostic(
    `${positions.length} positions ${JSON.stringify(kinds)} in ${clean.length} of ${all.length} files (the clean ones); ${windows} windows: ${JSON.stringify(outcomes)}`,
  );
  assert.ok(positions.length >= 500, `${positions.length} positions`);
  assert.equal(failures.length, 0, `${failures.length} of ${windows} windows lost the file's own text:\n${failures.join('\n')}`);
});
