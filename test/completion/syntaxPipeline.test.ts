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

test('a partial first line skips the syntax check it cannot pass yet; the whole line is checked when it is written', async () => {
  const syntax = new SyntaxRefiner();
  assert.ok(await syntax.ready('python'));
  const before = 'def report(items):\n    ';
  const text = `${before}\n`;
  const req = { doc: textSource(text), cursor: positionAt(text, before.length), languageId: 'python', path: 'a.py', explicit: false };
  for (const [whole, refreshed] of [
    ['print("Processing the items and their total")', ['print("Processing the items and their total")']],
    // The string never closes: the whole line is dropped, so the refresh has nothing to show.
    ['print("Processing the items and their total\n    return', undefined],
  ] as const) {
    const gen = new FakeGenerator();
    const svc = new CompletionService(
      gen,
      () => template,
      () => settings,
      () => ({ contextTokens: 2048 }),
      syntax,
    );
    const called = gen.nextCall();
    const shown = svc.complete(req);
    await called;
    // An open string: no parse yet, but it is the start of a line the model is still writing.
    let answered = false;
    void shown.then(() => (answered = true));
    gen.calls[0].stream('print("Processing the items and their tot', settings.preset.partialLineMs);
    await new Promise<void>((r) => setImmediate(r));
    assert.equal(answered, true, 'shown while the line is still being written');
    const partial = await shown;
    assert.deepEqual(partial.items, ['print("Processing the items and their']);
    gen.calls[0].finish(whole);
    assert.equal(await partial.fuller, true);
    assert.deepEqual(svc.peek(req)?.items, refreshed);
  }
});
