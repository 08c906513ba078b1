import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import { DeferredContext, MAX_CONTEXT_WAIT_MS } from '../../src/completion/context/deferredContext';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import type { ContextSnippet } from '../../src/completion/context/repo/snippet';
import type { Generator } from '../../src/completion/generator';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import type { CompletionSettings, ExtraChunk } from '../../src/completion/types';
import { Engine } from '../../src/engine/worker/engine';
import { TINY } from '../helpers';
import { recordingEngine } from './recordingEngine';

let engine: Engine;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1 });
});
after(async () => engine.dispose());

const backend = (aside = true) => recordingEngine(engine, aside);

/** Repository context as the gatherer stores it: what `snippets` returns is what the next prompt may use. */
const repo = { now: [] as ContextSnippet[], snippets: (_path: string) => repo.now };
const declaration = (path: string, name: string): ContextSnippet => ({
  source: 'imports',
  path,
  text: `def ${name}(value, scale=2):\n    """Scales a value for the ${name} report."""\n    return value * scale`,
  score: 1,
  line: 0,
  names: [name],
});

function service(g: Generator, settings: () => Partial<CompletionSettings> = () => ({})) {
  return new CompletionService(
    g,
    () => pickFimTemplate(engine.info.specialTokens),
    () => ({ ...defaultCompletionSettings(), prefetch: false, minConfidence: 1, ...settings() }),
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
    null,
    { repo },
  );
}

const BODY = ['import os', '', 'def total(values):', '    out = 0', '    for v in values:', '        out += v'];
const TAIL = Array.from({ length: 8 }, (_, i) => `def helper_${i}(value):\n    return value * ${i + 2}\n`).join('\n');
/** The file with `typed` at the end of its last line, the cursor after it. */
const at = (typed: string) => {
  const head = `${BODY.join('\n')}${typed}`;
  const text = `${head}\n\n${TAIL}`;
  return { doc: textSource(text), cursor: positionAt(text, head.length), languageId: 'python', path: 'calc.py', explicit: false };
};

test('a changed context waits for its warm-up: the keystroke after the change reads a few tokens, and so does the one after the warm-up', async () => {
  const b = backend();
  const svc = service(b.g);
  engine.resetCache();
  repo.now = [declaration('lib/first.py', 'scale_first')];
  await svc.complete(at(''));
  await svc.idle();
  assert.ok(b.prompts[0].includes('scale_first'), 'the first prompt holds the context found then');

  repo.now = [declaration('lib/second.py', 'scale_second')];
  await svc.complete(at(' '));
  assert.ok(b.prompts[1].includes('scale_first') && !b.prompts[1].includes('scale_second'), 'the keystroke keeps the context the cache holds');
  assert.ok(b.prefilled[1] <= 6, `prefilled ${b.prefilled[1]}: the typed text only`);
  assert.ok(
    svc.promptFor(at(' ')).extra.some((c) => c.text.includes('scale_second')),
    'Show Prompt shows the changed context',
  );

  await svc.idle();
  assert.equal(b.warmed.length, 1, 'the changed context was warmed once the user stopped');
  assert.ok(b.warmed[0].includes('scale_second') && !b.warmed[0].includes('scale_first'));
  await svc.complete(at('  '));
  assert.ok(b.prompts[2].includes('scale_second') && !b.prompts[2].includes('scale_first'), 'after the warm-up, requests send the changed context');
  assert.ok(b.prefilled[2] <= 6, `prefilled ${b.prefilled[2]}: the warm-up read the rest`);

  // Without a second cache (a server's single slot) the changed context goes out at once, and its keystroke reads the file again.
  const one = backend(false);
  const plain = service(one.g);
  engine.resetCache();
  repo.now = [declaration('lib/first.py', 'scale_first')];
  await plain.complete(at(''));
  repo.now = [declaration('lib/second.py', 'scale_second')];
  await plain.complete(at(' '));
  assert.ok(one.prompts[1].includes('scale_second'));
  assert.ok(one.prefilled[1] > 40, `prefilled ${one.prefilled[1]}: the window after the context, again`);
});

test('a keystroke before the pause puts the warm-up off, and the next pause warms the changed context', async () => {
  const b = backend();
  const svc = service(b.g);
  engine.resetCache();
  repo.now = [declaration('lib/first.py', 'scale_first')];
  await svc.complete(at(''));
  repo.now = [declaration('lib/second.py', 'scale_second')];
  await svc.complete(at(' ')); // schedules the warm-up of the changed context
  await svc.complete(at('  ')); // before the pause: the warm-up never started
  assert.equal(b.warmed.length, 0);
  assert.ok(b.prompts[2].includes('scale_first'), 'still the old context while its warm-up waits');
  await svc.idle();
  assert.equal(b.warmed.length, 1);
  await svc.complete(at('   '));
  assert.ok(b.prompts[3].includes('scale_second'));
});

test('a change of the context settings applies at the next request', async () => {
  const b = backend();
  let chars = 2000;
  const svc = service(b.g, () => ({ extraContextChars: chars }));
  engine.resetCache();
  repo.now = [declaration('lib/first.py', 'scale_first')];
  await svc.complete(at(''));
  assert.ok(b.prompts[0].includes('scale_first'));
  chars = 0;
  await svc.complete(at(' '));
  assert.ok(!b.prompts[1].includes('scale_first'), 'turned off, the context is gone at once');
});

test('DeferredContext: the last context while the fresh one may wait, the fresh one first, after the wait or with new settings', () => {
  const chunk = (text: string): ExtraChunk => ({ path: 'a.py', text });
  const old = [chunk('def a(): ...')];
  const fresh = [chunk('def b(): ...')];
  const d = new DeferredContext();
  assert.deepEqual(d.choose('x.py', fresh, undefined, 0, 's'), { extra: fresh, deferred: false }, 'no prompt yet in the file');
  d.sent('x.py', false, 0, 's');
  assert.deepEqual(d.choose('x.py', fresh, old, 100, 's'), { extra: old, deferred: true });
  assert.deepEqual(d.choose('x.py', fresh, [chunk('def b(): ...')], 100, 's'), { extra: fresh, deferred: false }, 'the same bytes');
  assert.deepEqual(d.choose('x.py', fresh, old, 100, 'other settings'), { extra: fresh, deferred: false });
  d.sent('x.py', true, 100, 's');
  d.sent('x.py', true, 5_000, 's'); // the wait runs from its first deferred request
  assert.equal(d.choose('x.py', fresh, old, 100 + MAX_CONTEXT_WAIT_MS - 1, 's').deferred, true);
  assert.deepEqual(d.choose('x.py', fresh, old, 100 + MAX_CONTEXT_WAIT_MS, 's'), { extra: fresh, deferred: false }, 'waited long enough');
  assert.equal(d.choose('y.py', fresh, old, 100 + MAX_CONTEXT_WAIT_MS, 's').deferred, true, 'each file waits on its own');
  d.sent('x.py', false, 20_000, 's');
  assert.equal(d.choose('x.py', fresh, old, 20_001, 's').deferred, true, 'a new change waits again');
});

test('a changed context is warmed after a shown suggestion too, once its prefetch is done', async () => {
  const b = backend();
  const svc = service(b.g, () => ({ prefetch: true, minConfidence: 0 }));
  engine.resetCache();
  repo.now = [declaration('lib/first.py', 'scale_first')];
  await svc.complete(at(''));
  await svc.idle();
  repo.now = [declaration('lib/second.py', 'scale_second')];
  const shown = await svc.complete(at('\n        out'));
  await shown.fuller;
  assert.ok(shown.items.length > 0, 'a suggestion was shown (its prefetch runs)');
  await svc.idle();
  assert.equal(b.warmed.length, 1, 'the changed context was warmed after the prefetch');
  assert.ok(b.warmed[0].includes('scale_second'));
});
