/** The completion pipeline with the real tree-sitter refiner behind the filters. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { SyntaxRefiner } from '../../src/completion/syntax/syntaxRefiner';
import { FakeGenerator } from './fakeGenerator';

const template = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));
const settings = { ...defaultCompletionSettings(), prefetch: false };

async function complete(before: string, after: string, model: string, syntax: SyntaxRefiner | null) {
  const svc = new CompletionService(
    new FakeGenerator(() => model),
    () => template,
    () => settings,
    () => ({ contextTokens: 2048 }),
    syntax,
  );
  const text = before + after;
  return svc.complete({ doc: textSource(text), cursor: positionAt(text, before.length), languageId: 'python', path: 'a.py', explicit: false });
}

test('a suggestion that adds a parse error is dropped; without the refiner the filters let it through', async () => {
  const syntax = new SyntaxRefiner();
  assert.ok(await syntax.ready('python'));
  const before = 'def fibonacci(n):\n    ';
  const after = '\n\n\nprint(fibonacci(10))\n';
  const bad = ".get('-', '";
  assert.deepEqual((await complete(before, after, bad, null)).items, [bad], 'the indentation filters alone keep it');
  assert.deepEqual((await complete(before, after, bad, syntax)).items, []);
  const good = 'if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)';
  assert.deepEqual((await complete(before, after, good, syntax)).items, [good], 'valid code passes');
});
