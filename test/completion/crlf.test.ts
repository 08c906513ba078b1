import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { postProcess } from '../../src/completion/filters/pipeline';
import { toEol, toLf, withInsertion } from '../../src/completion/lineEndings';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { SyntaxRefiner } from '../../src/completion/syntax/syntaxRefiner';
import { FakeGenerator } from './fakeGenerator';

/**
 * CRLF documents (Windows) through the pipeline (docs/platforms.md): the context, the prompt, the filters,
 * tree-sitter and the typed-ahead cache see the same LF text as for the LF document; the model's own "\r\n" is
 * normalised; a multi-line suggestion goes back to the editor with the document's ending.
 */

const template = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));
const settings = { ...defaultCompletionSettings(), prefetch: false };
const crlf = (s: string) => s.replace(/\n/g, '\r\n');
const noCr = (items: string[]) =>
  assert.ok(
    items.every((t) => !t.includes('\r')),
    JSON.stringify(items),
  );

function service(gen: FakeGenerator, syntax: SyntaxRefiner | null = null) {
  return new CompletionService(
    gen,
    () => template,
    () => settings,
    () => ({ contextTokens: 2048 }),
    syntax,
  );
}

const request = (text: string, offset: number) => ({
  doc: textSource(text),
  cursor: positionAt(text, offset),
  languageId: 'python',
  path: 'a.py',
  explicit: false,
});

const BEFORE = 'def fibonacci(n):\n    ';
const AFTER = '\n\n\nprint(fibonacci(10))\n';

test('a CRLF document gives the same cursor, context and prompt as its LF twin, without "\\r"', async () => {
  const lf = BEFORE + AFTER;
  const cr = crlf(lf);
  const at = crlf(BEFORE).length;
  assert.deepEqual(positionAt(cr, at), positionAt(lf, BEFORE.length));
  assert.deepEqual(
    positionAt(cr, 'def fibonacci(n):\r'.length),
    { line: 0, character: 'def fibonacci(n):'.length },
    'between "\\r" and "\\n": the end of the line',
  );
  assert.deepEqual(positionAt('a\rb', 2), { line: 1, character: 0 }, 'a lone "\\r" breaks the line, as in VS Code');
  const doc = textSource(cr);
  for (let i = 0; i < doc.lineCount; i++) assert.ok(!doc.lineAt(i).includes('\r'), `line ${i}`);
  const gLf = new FakeGenerator(() => 'return n');
  const gCr = new FakeGenerator(() => 'return n');
  const a = await service(gLf).complete(request(lf, BEFORE.length));
  const b = await service(gCr).complete(request(cr, at));
  assert.equal(gCr.calls[0].prompt, gLf.calls[0].prompt);
  assert.ok(!gCr.calls[0].prompt.includes('\r'));
  assert.deepEqual(b.items, a.items);
});

test("the model's own CRLF is normalised before the filters, which then act as for LF", async () => {
  const ctx = { linePrefix: '    ', lineSuffix: '', nextLines: ['def other():'], lineAbove: 'def fib(n):', indent: '    ' };
  const raw = 'if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\ndef other():\n    pass\n';
  const lfOut = postProcess(raw, ctx);
  assert.equal(lfOut, 'if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)');
  assert.equal(postProcess(crlf(raw), ctx), lfOut, 'the repeat of the next lines is cut as for LF');
  // Repeating the line below (dropRepeatOfNextLines) and the suffix overlap (trimSuffixOverlap) both compare lines.
  const next = { ...ctx, linePrefix: 'x = ', indent: '', nextLines: ['y = 2', 'z = 3'] };
  assert.equal(postProcess(crlf('1\r\ny = 2\r\nz = 3'), next), postProcess('1\ny = 2\nz = 3', next));
});

test('a CRLF model answer through the service: no stray "\\r", tree-sitter keeps valid code and drops a parse error', async () => {
  const syntax = new SyntaxRefiner();
  assert.ok(await syntax.ready('python'));
  const cr = crlf(BEFORE + AFTER);
  const at = crlf(BEFORE).length;
  const good = 'if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)';
  const r = await service(new FakeGenerator(() => crlf(good)), syntax).complete(request(cr, at));
  assert.deepEqual(r.items, [good]);
  const bad = await service(new FakeGenerator(() => ".get('-', '\r\n"), syntax).complete(request(cr, at));
  assert.deepEqual(bad.items, [], 'the parse error is found in a CRLF answer too');
});

test('the typed-ahead cache serves a CRLF document', async () => {
  const gen = new FakeGenerator(() => 'fibonacci(n - 1)\r\n');
  const svc = service(gen);
  const head = crlf('def fibonacci(n):\n    return ');
  const tail = crlf('\n\nprint(1)\n');
  const first = await svc.complete(request(head + tail, head.length));
  assert.deepEqual(first.items, ['fibonacci(n - 1)']);
  const typed = `${head}fibo`;
  const next = await svc.complete(request(typed + tail, typed.length));
  assert.equal(next.source, 'cache');
  assert.deepEqual(next.items, ['nacci(n - 1)']);
  assert.equal(gen.calls.length, 1);
  noCr([...first.items, ...next.items]);
});

test("a multi-line suggestion takes the document's line ending", () => {
  const s = 'if n < 2:\n        return n\n    return 1';
  assert.equal(toEol(s, '\n'), s);
  const win = toEol(s, '\r\n');
  assert.equal(win, 'if n < 2:\r\n        return n\r\n    return 1');
  assert.equal(toEol(crlf(s), '\r\n'), win, 'never "\\r\\r\\n"');
  // Inserted into a CRLF document, every line still ends in CRLF.
  const doc = crlf(BEFORE + AFTER);
  const at = crlf(BEFORE).length;
  const after = doc.slice(0, at) + win + doc.slice(at);
  assert.ok(!/\r(?!\n)|(?<!\r)\n/.test(after), JSON.stringify(after));
  assert.equal(toLf(after), BEFORE + s + AFTER);
});

test("Generate from Selection's review shows the file as Insert will write it: CRLF stays CRLF, mixed files keep their own lines", () => {
  const crlf = 'def f(x):\r\n    return x\r\n\r\nprint(f(1))\r\n';
  const at = crlf.indexOf('\r\nprint') + 2;
  const review = withInsertion(crlf, at, 'def g(y):\n    return y\n', '\r\n');
  assert.equal(review, 'def f(x):\r\n    return x\r\n\r\ndef g(y):\r\n    return y\r\nprint(f(1))\r\n');
  assert.equal(review.replace(/\r\n/g, '').includes('\n'), false);
  // A file with a stray LF line keeps it as it is; only the inserted text takes the document's line ending.
  const mixed = 'a = 1\r\nb = 2\nc = 3\r\n';
  assert.equal(withInsertion(mixed, mixed.length, 'd = 4\ne = 5\n', '\r\n'), 'a = 1\r\nb = 2\nc = 3\r\nd = 4\r\ne = 5\r\n');
  // The model's own CRLF is not doubled.
  assert.equal(withInsertion('x\r\n', 3, 'y\r\nz\n', '\r\n'), 'x\r\ny\r\nz\r\n');
  assert.equal(withInsertion('x\n', 2, 'y\r\nz\n', '\n'), 'x\ny\nz\n');
});
