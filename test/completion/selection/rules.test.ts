import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { planGeneration } from '../../../src/completion/selection/plan';
import { GENERATE_RULES, processGenerated } from '../../../src/completion/selection/rules/pipeline';
import type { GenerateRuleContext } from '../../../src/completion/selection/rules/ruleContext';
import { syntaxProbe } from '../../../src/completion/selection/syntaxProbe';
import { leadingWhitespace, textSource } from '../../../src/completion/context/documentContext';
import type { FinishReason } from '../../../src/engine/shared/types';
import { SyntaxRefiner } from '../../../src/completion/syntax/syntaxRefiner';
import { ROOT } from '../../helpers';
import { windowAt } from '../syntax/windowAt';

/**
 * One golden case of a Generate from Selection rule: the document with the insertion point at █ (lines),
 * the model's text (lines), and what the rule returns (lines; null: dropped). `languageId` picks the
 * grammar the syntax rules parse with (none: the rule runs without tree-sitter).
 */
interface GoldenCase {
  name: string;
  languageId?: string;
  doc: string[];
  text: string[];
  finishReason?: FinishReason;
  keepParseErrors?: boolean;
  expected: string[] | null;
}

const GOLDEN = path.join(ROOT, 'test', 'completion', 'selection', 'golden');
// A generous parse timeout: a golden answer must not depend on how busy the machine is.
const refiner = new SyntaxRefiner({ parseTimeoutMs: 2000 });
const LANGUAGES = ['python', 'typescript', 'javascript'];

before(async () => {
  for (const id of LANGUAGES) assert.equal(await refiner.ready(id), true, `grammar for ${id}`);
});
after(() => refiner.dispose());

function contextOf(c: GoldenCase): GenerateRuleContext {
  const w = windowAt(c.languageId ?? 'plaintext', c.doc.join('\n'));
  return {
    above: w.prefix + w.linePrefix,
    below: w.lineSuffix + w.suffix,
    indent: leadingWhitespace(w.linePrefix),
    finishReason: c.finishReason,
    syntax: c.languageId ? syntaxProbe(refiner, w) : null,
    keepParseErrors: c.keepParseErrors ?? false,
  };
}

const lines = (t: string | null) => (t === null ? null : t.split('\n'));

for (const [name, rule] of GENERATE_RULES) {
  test(`golden: ${name}`, () => {
    const file = path.join(GOLDEN, `${name}.json`);
    assert.ok(fs.existsSync(file), `every rule has a golden file: ${file}`);
    const cases = JSON.parse(fs.readFileSync(file, 'utf8')) as GoldenCase[];
    assert.ok(cases.length >= 4);
    for (const c of cases) {
      const got = lines(rule(c.text.join('\n'), contextOf(c)));
      if (process.env.GOLDEN_PRINT) console.log(name, '|', c.name, '|', JSON.stringify(got));
      else assert.deepEqual(got, c.expected, c.name);
    }
  });
}

test('the rules together: a TypeScript loop of copies after an interface ends with the interface', () => {
  const doc = 'export interface Item {█\n\nexport const items: Item[] = [];\n';
  const w = windowAt('typescript', doc);
  const copy = 'export function increment(value) { return value.toUpperCase() + "!"; }';
  const raw = `\n  id: number;\n  name: string;\n}\n\n${copy}\n\n${copy}\n\n${copy}\n\nexport function incr`;
  const out = processGenerated(raw, {
    above: w.prefix + w.linePrefix,
    below: w.lineSuffix + w.suffix,
    indent: '',
    finishReason: 'length',
    syntax: syntaxProbe(refiner, w),
    keepParseErrors: false,
  });
  assert.equal(out.text, '\n  id: number;\n  name: string;\n}');
});

test('a result that adds parse errors is dropped, with the text the review can still offer', () => {
  const w = windowAt('python', 'def f(x):█\n\nprint(1)\n');
  const out = processGenerated('\n    return x +\n', {
    above: w.prefix + w.linePrefix,
    below: w.suffix,
    indent: '',
    finishReason: 'eos',
    syntax: syntaxProbe(refiner, w),
    keepParseErrors: false,
  });
  assert.equal(out.text, null);
  assert.equal(out.droppedBy, 'dropParseErrors');
  assert.equal(out.beforeDrop, '\n    return x +\n');
});

test('what a selection asks for, by where it ends', () => {
  const doc = textSource(
    'class A:\n    def area(self):\n        """The area."""\n        total = 0\n        for x in self.xs:\n\n# sum two numbers\nx = 1  # one\n',
  );
  const at = (line: number, character: number) => ({ line, character });
  // Signature and docstring, selected as whole lines (the selection ends at the next line's start).
  assert.deepEqual(planGeneration(doc, { start: at(1, 0), end: at(3, 0) }), { intent: 'body', insertAt: at(2, 23) });
  assert.deepEqual(planGeneration(doc, { start: at(1, 4), end: at(1, 19) }), { intent: 'body', insertAt: at(1, 19) });
  assert.deepEqual(planGeneration(doc, { start: at(6, 0), end: at(6, 17) }), { intent: 'body', insertAt: at(6, 17) });
  // A partial block (trailing blank lines are not part of it).
  assert.deepEqual(planGeneration(doc, { start: at(1, 0), end: at(4, 0) }), { intent: 'finish', insertAt: at(3, 17) });
  assert.deepEqual(planGeneration(doc, { start: at(1, 0), end: at(6, 0) }), { intent: 'body', insertAt: at(4, 25) });
  assert.deepEqual(planGeneration(doc, { start: at(3, 0), end: at(3, 17) }), { intent: 'finish', insertAt: at(3, 17) });
  // Nothing selected: the end of the cursor line.
  assert.deepEqual(planGeneration(doc, { start: at(3, 4), end: at(3, 4) }), { intent: 'continue', insertAt: at(3, 17) });
  // Mid-line with code after: the rest of the line stays after the result.
  assert.deepEqual(planGeneration(doc, { start: at(7, 0), end: at(7, 5) }), { intent: 'finish', insertAt: at(7, 5) });
});
