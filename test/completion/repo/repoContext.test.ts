import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ContextProvider, type GatherAt, RepoContext } from '../../../src/completion/context/repo/repoContext';
import type { ContextSnippet } from '../../../src/completion/context/repo/snippet';

const at = (line: number, path = 'a.ts'): GatherAt => ({ path, languageId: 'typescript', length: 10, text: () => 'x', line });
const snippet = (text: string): ContextSnippet => ({ source: 'similar', path: 'b.ts', line: 0, text, score: 1 });

test('a prompt reads what was gathered without waiting; a slow provider is cut at its deadline and keeps what it had', async () => {
  let release: () => void = () => {};
  const slow: ContextProvider = {
    source: 'similar',
    key: (a) => String(a.line),
    gather: (_a, signal) =>
      new Promise((resolve) => {
        release = () => resolve([snippet('late')]);
        signal.addEventListener('abort', () => resolve([snippet('partial')]));
      }),
  };
  const ctx = new RepoContext([slow], { enabled: () => true, deadlineMs: 30 });
  const done = ctx.refresh(at(1));
  assert.deepEqual(ctx.snippets('a.ts'), [], 'nothing yet, and no waiting');
  await done;
  assert.deepEqual(
    ctx.snippets('a.ts').map((s) => s.text),
    ['partial'],
  );
  assert.equal(ctx.stats.timeouts, 1);
  release();
});

test('the same key gathers once; a provider that throws costs only its own snippets, logged once', async () => {
  let calls = 0;
  const counting: ContextProvider = {
    source: 'imports',
    key: () => 'same',
    gather: async () => {
      calls++;
      return [{ ...snippet('decl'), source: 'imports' }];
    },
  };
  const broken: ContextProvider = {
    source: 'definitions',
    key: (a) => String(a.line),
    gather: async () => {
      throw new Error('language server crashed');
    },
  };
  const logs: string[] = [];
  const ctx = new RepoContext([counting, broken], { enabled: () => true, log: (l) => logs.push(l) });
  await ctx.refresh(at(1));
  await ctx.refresh(at(2));
  await ctx.refresh(at(3));
  assert.equal(calls, 1);
  assert.deepEqual(
    ctx.snippets('a.ts').map((s) => s.text),
    ['decl'],
  );
  assert.equal(ctx.stats.failures, 3, 'asked again at each new key');
  assert.equal(logs.length, 1);
  assert.match(logs[0], /definitions failed for a.ts: language server crashed/);
});

test('a source turned off in the settings is neither gathered nor read', async () => {
  let on = true;
  const p: ContextProvider = { source: 'similar', key: (a) => String(a.line), gather: async () => [snippet('s')] };
  const ctx = new RepoContext([p], { enabled: () => on });
  await ctx.refresh(at(1));
  assert.equal(ctx.snippets('a.ts').length, 1);
  on = false;
  assert.equal(ctx.snippets('a.ts').length, 0);
  await ctx.refresh(at(2));
  assert.equal(ctx.stats.gathers, 1);
});

test('a gather cut at its deadline is asked again for the same key (a language server still starting answers later)', async () => {
  let clock = 0;
  let answers = false;
  const p: ContextProvider = {
    source: 'definitions',
    key: () => 'same line',
    gather: (_a, signal) =>
      answers
        ? Promise.resolve([{ ...snippet('found'), source: 'definitions' }])
        : new Promise((resolve) => signal.addEventListener('abort', () => resolve([]))),
  };
  const ctx = new RepoContext([p], { enabled: () => true, deadlineMs: 10, now: () => clock });
  await ctx.refresh(at(1));
  assert.deepEqual(ctx.snippets('a.ts'), []);
  answers = true;
  await ctx.refresh(at(1));
  assert.deepEqual(ctx.snippets('a.ts'), [], 'not again at once');
  clock += 1500;
  await ctx.refresh(at(1));
  assert.deepEqual(
    ctx.snippets('a.ts').map((s) => s.text),
    ['found'],
  );
  clock += 1500;
  await ctx.refresh(at(1));
  assert.equal(ctx.stats.gathers, 2, 'a settled key is not asked again');
});

test('a provider whose empty answer is not final (a language server loading its project) is asked again; force asks at once', async () => {
  let clock = 0;
  let found: ContextSnippet[] = [];
  let calls = 0;
  const p: ContextProvider = {
    source: 'definitions',
    retryWhenEmpty: true,
    key: () => 'k',
    gather: async () => {
      calls++;
      return found;
    },
  };
  const ctx = new RepoContext([p], { enabled: () => true, now: () => clock });
  await ctx.refresh(at(1));
  found = [{ ...snippet('def'), source: 'definitions' }];
  await ctx.refresh(at(1));
  assert.equal(calls, 1, 'not sooner than a second later');
  clock += 1001;
  await ctx.refresh(at(1));
  assert.equal(calls, 2);
  assert.equal(ctx.snippets('a.ts').length, 1);
  await ctx.refresh(at(1));
  assert.equal(calls, 2, 'an answer with snippets is final for its key');
  await ctx.refresh(at(1), undefined, true);
  assert.equal(calls, 3, 'forced');
});

test('two providers of one source keep their results side by side, and the source setting turns both off', async () => {
  const provider = (id: string, text: string): ContextProvider => ({
    source: 'imports',
    id,
    key: () => 'k',
    gather: async () => [{ ...snippet(text), source: 'imports' }],
  });
  let on = true;
  const ctx = new RepoContext([provider('imports', 'stable'), provider('imports:receivers', 'at cursor')], { enabled: () => on });
  await ctx.refresh(at(1));
  assert.deepEqual(
    ctx
      .snippets('a.ts')
      .map((s) => s.text)
      .sort(),
    ['at cursor', 'stable'],
  );
  on = false;
  assert.deepEqual(ctx.snippets('a.ts'), []);
});

test('a source that keeps earlier snippets: fresh first, earlier ones below at a capped score, the same declaration replaced, at most `max`, per file', async () => {
  const found: Record<number, string[]> = { 1: ['A', 'B'], 2: [], 3: ['C', 'A'], 4: ['D', 'E', 'F'] };
  let empty = false;
  const p: ContextProvider = {
    source: 'definitions',
    retryWhenEmpty: true,
    keepEarlier: { max: 4, score: 0.5 },
    key: (a) => String(a.line),
    gather: async (a) =>
      empty
        ? []
        : (found[a.line] ?? []).map((name, i) => ({
            source: 'definitions',
            path: 'lib.ts',
            line: 0,
            text: `${name}@${a.line}`,
            names: [name],
            score: 1 - i * 0.1,
          })),
  };
  const ctx = new RepoContext([p], { enabled: () => true });
  const seen = (path = 'a.ts') => ctx.snippets(path).map((s) => `${s.text}:${s.score}`);
  await ctx.refresh(at(1));
  assert.deepEqual(seen(), ['A@1:1', 'B@1:0.9']);
  await ctx.refresh(at(2));
  assert.deepEqual(seen(), ['A@1:0.5', 'B@1:0.5'], 'a line that uses nothing keeps what the earlier lines found');
  await ctx.refresh(at(3));
  assert.deepEqual(seen(), ['C@3:1', 'A@3:0.9', 'B@1:0.5'], 'a declaration found again is the fresh one, once');
  await ctx.refresh(at(4));
  assert.deepEqual(seen(), ['D@4:1', 'E@4:0.9', 'F@4:0.8', 'C@3:0.5'], 'at most max, the oldest dropped');
  await ctx.refresh(at(1, 'other.ts'));
  assert.deepEqual(seen('other.ts'), ['A@1:1', 'B@1:0.9'], 'another file keeps its own');
  assert.equal(seen().length, 4);
  empty = true;
  ctx.forget('a.ts');
  await ctx.refresh(at(5));
  assert.deepEqual(seen(), [], 'a forgotten file keeps nothing');
});

test('a provider is handed what it last found for the file (any key), so its ranking can hold what it showed', async () => {
  const handed: string[][] = [];
  const p: ContextProvider = {
    source: 'similar',
    key: (a) => String(a.line),
    gather: async (a, _signal, shown) => {
      handed.push(shown.map((s) => s.text));
      return [snippet(`found at ${a.line}`)];
    },
  };
  const ctx = new RepoContext([p], { enabled: () => true });
  await ctx.refresh(at(1));
  await ctx.refresh(at(2));
  await ctx.refresh(at(3, 'other.ts'));
  assert.deepEqual(handed, [[], ['found at 1'], []]);
});

test('a saved file is read again: sources holding its snippets gather again for the same key, and kept ones from it go', async () => {
  const disk: Record<string, string> = { 'lib.ts': 'function f(a)', 'util.ts': 'function g()' };
  const p: ContextProvider = {
    source: 'definitions',
    keepEarlier: { max: 8, score: 0.8 },
    // As the language server's source: an empty answer for a key is not final, and keeps what it had.
    retryWhenEmpty: true,
    key: (a) => String(a.line),
    // Line 1 uses lib.ts's f, line 2 util.ts's g, line 3 nothing.
    gather: async (a) =>
      ({ 1: ['lib.ts'], 2: ['util.ts'] })[a.line as 1 | 2]?.map((path) => ({ source: 'definitions' as const, path, line: 0, text: disk[path], score: 1 })) ??
      [],
  };
  let gathers = 0;
  const counted: ContextProvider = {
    ...p,
    gather: (...args) => {
      gathers++;
      return p.gather(...args);
    },
  };
  const ctx = new RepoContext([counted], { enabled: () => true });
  const seen = () => ctx.snippets('a.ts').map((s) => s.text);
  await ctx.refresh(at(1));
  await ctx.refresh(at(2));
  assert.deepEqual(seen(), ['function g()', 'function f(a)']);
  disk['lib.ts'] = 'function f(a, b)';
  await ctx.refresh(at(2));
  assert.equal(gathers, 2, 'the same key is not asked again before a save');
  ctx.changed('lib.ts');
  await ctx.refresh(at(2));
  assert.equal(gathers, 3);
  assert.deepEqual(seen(), ['function g()'], 'the kept snippet of the saved file goes (its new text comes when a line uses it)');
  await ctx.refresh(at(1));
  assert.deepEqual(seen(), ['function f(a, b)', 'function g()']);
  ctx.changed('other.ts');
  await ctx.refresh(at(1));
  assert.equal(gathers, 4, 'a save of a file nothing came from asks nothing again');
  await ctx.refresh(at(3));
  assert.deepEqual(seen(), ['function f(a, b)', 'function g()'], 'a line that uses nothing keeps what earlier lines found');
  ctx.changed('util.ts');
  await ctx.refresh(at(3));
  assert.deepEqual(seen(), ['function f(a, b)'], 'an empty answer for the same key keeps nothing from the changed file');
});
