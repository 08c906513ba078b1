import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { parseContentRange, parseSize } from '../../src/hub/responseHeaders';
import { repoPathProblem } from '../../src/hub/repoRef';
import { shardPathProblem } from '../../src/hub/shardIndex';
import { fuzzParams } from '../fuzz/fuzzParams';

/**
 * Properties of the repo path check and the size-header parsers (seed and runs: test/fuzz/fuzzParams.ts).
 */

const params = fuzzParams(2000);

// Paths built from the pieces that matter, joined by "/" or "\", plus arbitrary unicode and binary strings.
const piece = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '',
    '...',
    '. ',
    '.. ',
    ' ',
    'a',
    'model.onnx',
    'C:',
    'c:',
    '\0',
    '\n',
    '\u0085',
    '\u2024',
    '\uff0e\uff0e',
    '~',
    '%2e%2e',
    '\\',
    '/',
  ),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const repoPath = fc.oneof(
  fc.array(piece, { maxLength: 6 }).chain((parts) => fc.constantFrom('/', '\\', '').map((sep) => parts.join(sep))),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
);

function strictlyInside(p: path.PlatformPath, dir: string, rel: string): boolean {
  const r = p.resolve(dir, rel);
  return (
    r !== dir &&
    r.startsWith(dir + p.sep) &&
    p
      .relative(dir, r)
      .split(p.sep)
      .every((s) => s !== '..' && s !== '')
  );
}

test('repo path check: never throws; an accepted path resolves strictly inside the folder (posix and win32)', () => {
  fc.assert(
    fc.property(repoPath, (p) => {
      const problem = repoPathProblem(p);
      assert.ok(problem === undefined || (typeof problem === 'string' && problem.length > 0));
      if (problem !== undefined) return;
      assert.ok(strictlyInside(path.posix, '/srv/models/acme--x', p), `posix: ${JSON.stringify(p)}`);
      assert.ok(strictlyInside(path.win32, 'C:\\models\\acme--x', p), `win32: ${JSON.stringify(p)}`);
      // The native resolve the downloader uses, too.
      const dir = path.resolve('models-root', 'acme--x');
      assert.ok(strictlyInside(path, dir, p), `native: ${JSON.stringify(p)}`);
    }),
    params,
  );
});

test('repo path check: accepts plain relative paths; shard paths are repo paths that end in .safetensors', () => {
  const seg = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,11}$/).filter((s) => !/^\.*$/.test(s));
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 5 }), (segs) => {
      const p = segs.join('/');
      assert.equal(repoPathProblem(p), undefined, p);
      assert.equal(shardPathProblem(`${p}.safetensors`), undefined, p);
    }),
    params,
  );
  fc.assert(
    fc.property(repoPath, (p) => {
      if (repoPathProblem(p) !== undefined) assert.ok(shardPathProblem(p) !== undefined, p);
    }),
    params,
  );
});

// Header values: arbitrary strings, digit strings of any length (past 2^53), and near-valid ranges.
const digits = fc.stringMatching(/^[0-9]{1,25}$/);
const headerValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  digits,
  fc.tuple(fc.constantFrom('', ' ', '-', '+', '0x', '1e'), digits, fc.constantFrom('', ' ', '.5', 'e3', 'n')).map(([a, b, c]) => a + b + c),
  fc.tuple(digits, digits, fc.oneof(digits, fc.constant('*'))).map(([a, b, c]) => `bytes ${a}-${b}/${c}`),
  fc.tuple(fc.constantFrom('bytes ', 'bytes=', 'items ', ''), fc.string({ maxLength: 20 })).map(([a, b]) => a + b),
);

const isSize = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

test('size headers (Content-Length, X-Linked-Size): never throw, never a negative, fractional or NaN size', () => {
  fc.assert(
    fc.property(fc.option(headerValue, { nil: undefined }), (v) => {
      const n = parseSize(v);
      assert.ok(n === undefined || isSize(n), `${JSON.stringify(v)} -> ${n}`);
      if (n !== undefined) assert.equal(n, Number(v!.trim()));
    }),
    params,
  );
  fc.assert(
    fc.property(fc.maxSafeNat(), (n) => assert.equal(parseSize(String(n)), n)),
    params,
  );
});

test('Content-Range: never throws; a parsed range is consistent (start <= end < total)', () => {
  fc.assert(
    fc.property(fc.option(headerValue, { nil: undefined }), (v) => {
      const r = parseContentRange(v);
      if (r === undefined) return;
      assert.ok(isSize(r.start) && isSize(r.end) && r.start <= r.end, JSON.stringify(v));
      assert.ok(r.total === undefined || (isSize(r.total) && r.end < r.total), JSON.stringify(v));
    }),
    params,
  );
  fc.assert(
    fc.property(fc.maxSafeNat(), fc.maxSafeNat(), fc.maxSafeNat(), (a, b, c) => {
      const [start, end, total] = [a, b, c].sort((x, y) => x - y);
      if (end === total) return;
      assert.deepEqual(parseContentRange(`bytes ${start}-${end}/${total}`), { start, end, total });
      assert.deepEqual(parseContentRange(`bytes ${start}-${end}/*`), { start, end, total: undefined });
    }),
    params,
  );
});
