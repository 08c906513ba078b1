import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fc from 'fast-check';
import type { FilterContext } from '../../src/completion/filters/filterContext';
import { FILTERS, dropsEveryAnswerFrom, postProcess } from '../../src/completion/filters/pipeline';
import { fuzzParams } from './fuzzParams';

// Code-like text: lines of brackets, quotes, indentation and words, plus arbitrary unicode.
const line = fc.oneof(
  fc
    .array(fc.constantFrom('    ', '\t', 'if x:', 'return', ' ', '(', ')', '{', '}', '[', ']', '"', "'", '`', 'a', 'b1', '=', ';', ',', '#', '//', '\r'), {
      maxLength: 10,
    })
    .map((p) => p.join('')),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const lines = fc.array(line, { maxLength: 8 });
const ctx: fc.Arbitrary<FilterContext> = fc.record({
  linePrefix: line,
  lineSuffix: fc.oneof(fc.constant(''), line),
  nextLines: lines,
  lineAbove: line,
  indent: fc.constantFrom('', '  ', '    ', '\t', '        '),
});
const raw = lines.map((l) => l.join('\n'));
const squash = (s: string) => s.replace(/\s+/g, '');

test('filters: any completion in any context gives null or a non-blank suggestion, and never throws', () => {
  fc.assert(
    fc.property(raw, ctx, (text, c) => {
      const out = postProcess(text, c);
      if (out === null) return;
      assert.equal(typeof out, 'string');
      assert.notEqual(out.trim(), '');
      assert.equal(out, out.trimEnd());
    }),
    fuzzParams(5000),
  );
});

test('filters only cut and re-indent: the suggestion is a prefix of the raw text, whitespace aside', () => {
  fc.assert(
    fc.property(raw, ctx, (text, c) => {
      const out = postProcess(text, c);
      if (out !== null) assert.ok(squash(text).startsWith(squash(out)), `${JSON.stringify(out)} from ${JSON.stringify(text)}`);
    }),
    fuzzParams(5000),
  );
});

test('each filter alone is total: a string or null for any input', () => {
  fc.assert(
    fc.property(fc.constantFrom(...FILTERS), fc.string({ unit: 'binary', maxLength: 80 }), ctx, ([name, filter], text, c) => {
      const out = filter(text, c);
      assert.ok(out === null || typeof out === 'string', name);
    }),
    fuzzParams(5000),
  );
});

// The rest of an answer, without an opening bracket: one it opened and never closed may let one more closer of
// the first line through (stopAtUnmatchedBracket trusts the document to close it), which pipeline.ts allows for.
const restWithoutOpeners = fc
  .array(
    line.map((l) => l.replace(/[([{]/g, 'o')),
    { minLength: 1, maxLength: 6 },
  )
  .map((l) => l.join('\n'));

const firstLine = fc.tuple(fc.constantFrom('', '\n', '\n\n'), line).map(([blank, l]) => blank + l);

test('a first line the filters drop for every answer it begins: every answer it begins is dropped', () => {
  fc.assert(
    fc.property(firstLine, restWithoutOpeners, ctx, (first, rest, c) => {
      // The first line with code on it, as the engine reports it: blank lines may come before it.
      if (first.trim() === '' || first.includes('\r') || !dropsEveryAnswerFrom(first, { ...c, finishReason: 'stop' })) return;
      for (const finishReason of ['stop', 'length'] as const) {
        const out = postProcess(`${first}\n${rest}`, { ...c, finishReason });
        assert.equal(out, null, `${JSON.stringify(first)} + ${JSON.stringify(rest)} (${finishReason}) gave ${JSON.stringify(out)}`);
      }
    }),
    fuzzParams(5000),
  );
});
