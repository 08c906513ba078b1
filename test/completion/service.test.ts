import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import type { CompletionSettings } from '../../src/completion/types';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import type { BackendHooks, Generator, InfillParts } from '../../src/completion/generator';
import { fimTemplateForFamily, pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { cancelledResult, emptyStats } from '../../src/engine/shared/cancelledResult';
import type { DecodeOptions } from '../../src/engine/shared/decodeOptions';
import { type Prompt, promptText } from '../../src/engine/shared/prompt';
import { Engine } from '../../src/engine/worker/engine';
import { TINY } from '../helpers';

let engine: Engine;
let settings: CompletionSettings;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1 });
  settings = { ...defaultCompletionSettings(), prefetch: false };
});
after(async () => engine.dispose());

const service = () =>
  new CompletionService(
    engine,
    () => pickFimTemplate(engine.info.specialTokens),
    () => settings,
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
  );
const request = (text: string, cursor: number, explicit = false) => ({
  doc: textSource(text),
  cursor: positionAt(text, cursor),
  languageId: 'python',
  path: 'demo.py',
  explicit,
});

const FILE =
  'import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return [l.rstrip() for l in f]\n\n\ndef main():\n    print(read_lines(os.sys.argv[1]))\n';

test('a model completion is filtered, cached, and served again for typed-ahead characters', async () => {
  const svc = service();
  const text = FILE;
  const at = text.indexOf('    print(') + 4;
  const first = await svc.complete(request(text, at));
  assert.equal(first.source, 'model');
  assert.ok(first.stats && first.stats.promptTokens > 0);
  const again = await svc.complete(request(text, at));
  assert.equal(again.source, 'cache');
  assert.deepEqual(again.items, first.items);
  // Typed-ahead reuse and in-flight reuse are covered deterministically in core.test.ts (fake generator).
});

test('a request for another context cancels the running one', async () => {
  const svc = service();
  // Both requests are issued before the engine starts the first: the second aborts it deterministically.
  const p1 = svc.complete(request('x = 1\n\n', 7));
  const p2 = svc.complete(request('def other():\n    ', 17));
  const [r1, r2] = await Promise.all([p1, p2]);
  assert.equal(r1.cancelled, true);
  assert.equal(r1.stats?.generatedTokens, 0);
  assert.equal(r2.source, 'model');
  assert.equal(r2.cancelled, false);
});

test('an explicit trigger returns distinct alternatives (n-best)', async () => {
  // The real engine, recorded: what it was asked for and the sequences it gave.
  const asked: Partial<DecodeOptions>[] = [];
  const given: string[][] = [];
  const recorded: Generator = {
    async generate(prompt, options, hooks) {
      asked.push(options);
      const r = await engine.generate(prompt, options, hooks);
      given.push(r.sequences.map((q) => q.text));
      return r;
    },
  };
  const svc = new CompletionService(
    recorded,
    () => pickFimTemplate(engine.info.specialTokens),
    () => settings,
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
  );
  const at = FILE.indexOf('    print(') + 4;
  const r = await svc.complete(request(FILE, at, true));
  assert.equal(r.source, 'model');
  assert.equal(settings.alternatives, 3);
  assert.equal(asked[0].numReturnSequences, 3);
  // Beam search gives 3 distinct texts here, each with a different first line (the line the suggestion
  // keeps): all 3 reach the user, distinct, best first.
  assert.equal(given[0].length, 3);
  assert.equal(new Set(given[0].map((t) => t.split('\n')[0])).size, 3, JSON.stringify(given[0]));
  assert.equal(r.items.length, 3, JSON.stringify(r.items));
  assert.equal(new Set(r.items).size, 3);
  assert.equal(r.raw, given[0][0]);
  for (const [i, item] of r.items.entries()) assert.ok(given[0][i].startsWith(item), `item ${i} comes from sequence ${i}`);
  // An automatic trigger at the same place is served from the cache, alternatives and all.
  const auto = await svc.complete(request(FILE, at));
  assert.equal(auto.source, 'cache');
  assert.deepEqual(auto.items, r.items);
});

test('alternatives that read the same after post-processing are shown once, in the order the backend ranked them', async () => {
  const texts = ['foo(1)', 'bar(2)', 'foo(1)', 'baz(3)'];
  const backend: Generator = {
    async generate(_prompt, options) {
      assert.equal(options.numReturnSequences, texts.length);
      const sequences = texts.map((text) => {
        const chars = [...text];
        let at = 0;
        return {
          ...cancelledResult(),
          text,
          finishReason: 'eos' as const,
          tokens: chars.map((c) => c.charCodeAt(0)),
          tokenLogprobs: chars.map(() => -0.01),
          tokenTextEnds: chars.map((c) => (at += c.length)),
        };
      });
      return { ...sequences[0], sequences, stats: { ...emptyStats(), promptTokens: 10 } };
    },
  };
  const svc = new CompletionService(
    backend,
    () => fimTemplateForFamily('starcoder'),
    () => ({ ...settings, alternatives: texts.length }),
    () => ({ contextTokens: 2048 }),
  );
  const text = 'x = \n';
  const r = await svc.complete(request(text, 4, true));
  assert.deepEqual(r.items, ['foo(1)', 'bar(2)', 'baz(3)']);
});

test('typing replay: each keystroke prefills only a few tokens through the real engine', async () => {
  const svc = service();
  const target = FILE.indexOf('def main():');
  const line = 'def main():';
  const fractions: number[] = [];
  const prefills: number[] = [];
  engine.resetCache();
  for (let i = 1; i <= line.length; i++) {
    const text = FILE.slice(0, target) + line.slice(0, i) + FILE.slice(target + line.length);
    const r = await svc.complete(request(text, target + i));
    if (r.source === 'model' && r.stats && i > 1) {
      fractions.push(r.stats.prefillTokens / r.stats.promptTokens);
      prefills.push(r.stats.prefillTokens);
    }
  }
  assert.ok(prefills.length >= 3, 'some keystrokes ran the model');
  const median = [...fractions].sort((a, b) => a - b)[Math.floor(fractions.length / 2)];
  assert.ok(median < 0.1, `median prefill fraction ${median}, prefills ${prefills}`);
  assert.ok(Math.max(...prefills) <= 4, `prefills per keystroke ${prefills}`);
});

test('warm(): the prompt and infill parts complete() sends, to the backend warm-up; false for a backend without one', async () => {
  const calls: { kind: string; prompt: string; infill?: InfillParts; signal?: AbortSignal }[] = [];
  const record = (kind: string, prompt: Prompt, hooks: BackendHooks = {}) =>
    calls.push({ kind, prompt: promptText(prompt), infill: hooks.infill, signal: hooks.signal });
  const backend: Generator = {
    async generate(prompt, _options, hooks) {
      record('generate', prompt, hooks);
      const seq = { ...cancelledResult(), finishReason: 'eos' as const, text: 'x' };
      return { ...seq, sequences: [seq] };
    },
    async prefill(prompt, hooks) {
      record('prefill', prompt, hooks);
    },
  };
  const withExtra = { ...settings, extraContextChars: 2000 };
  const svc = new CompletionService(
    backend,
    () => fimTemplateForFamily('starcoder'),
    () => withExtra,
    () => ({ contextTokens: 2048 }),
  );
  svc.ring.add('util.py', ['def helper(x):', '    return x * 2', ''], 0);
  const at = FILE.indexOf('    print(') + 4;
  const ac = new AbortController();
  assert.equal(await svc.prefill(request(FILE, at), ac.signal), true);
  await svc.complete(request(FILE, at));
  assert.deepEqual(
    calls.map((c) => c.kind),
    ['prefill', 'generate'],
  );
  const [warm, gen] = calls;
  assert.equal(warm.signal, ac.signal, 'the caller can cancel the warm-up');
  assert.equal(warm.prompt, gen.prompt, 'the same prompt');
  assert.deepEqual(warm.infill, gen.infill, 'the same parts for servers that build the prompt');
  assert.ok(warm.prompt.includes('def read_lines(path):') && warm.prompt.includes('def helper(x):'), warm.prompt);
  assert.equal(warm.infill?.extra.length, 1);
  // The local engine has no warm request: the caller falls back to a completion.
  assert.equal(await service().prefill(request(FILE, at)), false);
});
