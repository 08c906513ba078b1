/**
 * The completion core with a fake Generator: result cache, in-flight reuse, prefetch, cancellation order.
 * Deterministic: the test decides what the "model" streams and when it finishes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompletionCache, MAX_TYPED_AHEAD } from '../../src/completion/cache/completionCache';
import { CompletionService, REUSE_GRACE_MS } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { InFlight } from '../../src/completion/inflight';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { FakeGenerator } from './fakeGenerator';

/**
 * Lets a request that asks the model nothing (it waits on the running generation) get as far as waiting: every
 * promise hop it makes before that runs before an immediate does.
 */
const attached = () => new Promise<void>((r) => setImmediate(r));
const template = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));
const settings = { ...defaultCompletionSettings(), prefetch: false };
const service = (gen: FakeGenerator, s = settings) =>
  new CompletionService(
    gen,
    () => template,
    () => s,
    () => ({ contextTokens: 1024 }),
  );
const request = (text: string, cursor = text.length, explicit = false) => ({
  doc: textSource(text),
  cursor: positionAt(text, cursor),
  languageId: 'python',
  path: 'a.py',
  explicit,
});

test('cache: exact hit, typed-ahead walk-back, a disagreeing earlier suggestion, empty results not kept', () => {
  const c = new CompletionCache();
  c.set('h', 'x = ', { items: ['foo(1)', 'bar'], confidence: null });
  assert.deepEqual(c.get('h', 'x = ')?.items, ['foo(1)', 'bar']);
  assert.deepEqual(c.get('h', 'x = fo')?.items, ['o(1)'], 'typed "fo": the rest of the suggestion that starts with it');
  assert.equal(c.get('h', 'x = foo(1)'), undefined, 'typed all of it: nothing left to suggest');
  assert.equal(c.get('h', 'x = q'), undefined, 'typed something else');
  assert.equal(c.get('other', 'x = '), undefined, 'another context');
  c.set('h', 'y = ', { items: [], confidence: null });
  assert.equal(c.size, 1);
  // The walk-back is bounded.
  const long = 'a'.repeat(MAX_TYPED_AHEAD + 1);
  c.set('h', '', { items: [`${long}b`], confidence: null });
  assert.equal(c.get('h', long), undefined);
  assert.deepEqual(c.get('h', long.slice(1))?.items, ['ab']);
});

test('cache: least recently used entries go first, and entries expire', () => {
  let now = 1000;
  const c = new CompletionCache(2, 30, { now: () => now });
  c.set('h', 'a', { items: ['1'], confidence: null });
  c.set('h', 'b', { items: ['2'], confidence: null });
  c.get('h', 'a');
  c.set('h', 'c', { items: ['3'], confidence: null });
  assert.ok(c.get('h', 'a') && c.get('h', 'c'));
  assert.equal(c.get('h', 'b'), undefined);
  now += 29;
  assert.ok(c.get('h', 'c'), 'still fresh just before its time');
  now += 2;
  assert.equal(c.get('h', 'a'), undefined);
});

test('in-flight: compatible only with the same context, a prefix extended by what the model is writing', () => {
  const j = new InFlight('h', 'x = ', 50);
  j.streamed = 'foo(';
  assert.ok(j.compatible('h', 'x = '));
  assert.ok(j.compatible('h', 'x = fo'));
  assert.ok(j.compatible('h', 'x = foo(1'), 'typed past the stream: the stream may still produce it');
  assert.ok(!j.compatible('h', 'x = b'));
  assert.ok(!j.compatible('h', 'x ='), 'backspace restarts');
  assert.ok(!j.compatible('other', 'x = fo'));
  // From a whitespace-only line the stream continues after the indent.
  const w = new InFlight('h', '    ', 50);
  w.streamed = 'return x';
  assert.ok(w.compatible('h', '    ret'));
  assert.ok(!w.compatible('h', '    x'));
  j.abort();
  assert.ok(!j.compatible('h', 'x = fo'), 'an aborted generation is not reused');
});

test('in-flight: aborted once nobody waits, after the grace period; a new waiter in time keeps it', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const j = new InFlight('h', 'x', 30);
  const a = new AbortController();
  j.attach(a.signal);
  a.abort();
  t.mock.timers.tick(10);
  const b = new AbortController();
  j.attach(b.signal); // the next keystroke attaches within the grace
  t.mock.timers.tick(40);
  assert.equal(j.controller.signal.aborted, false);
  b.abort();
  t.mock.timers.tick(29);
  assert.equal(j.controller.signal.aborted, false, 'not before the grace has passed');
  t.mock.timers.tick(1);
  assert.equal(j.controller.signal.aborted, true);
});

test('service: a keystroke that types what the model is writing waits for it; no second model call', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const called1 = gen.nextCall();
  const first = svc.complete(request('x = '));
  await called1;
  assert.equal(gen.calls.length, 1);
  gen.calls[0].stream('foo');
  const second = svc.complete(request('x = f'));
  await attached(); // it asks the model nothing: it waits on the running generation
  gen.calls[0].stream('(1)');
  gen.calls[0].finish();
  const [r1, r2] = await Promise.all([first, second]);
  assert.deepEqual(r1.items, ['foo(1)']);
  assert.equal(r2.source, 'inflight');
  assert.deepEqual(r2.items, ['oo(1)']);
  assert.equal(gen.calls.length, 1);
  // And the result is cached for the keystroke after.
  const r3 = await svc.complete(request('x = fo'));
  assert.equal(r3.source, 'cache');
  assert.deepEqual(r3.items, ['o(1)']);
});

test('service: a request for another context aborts the running generation before the model starts the new one', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const called3 = gen.nextCall();
  const first = svc.complete(request('x = '));
  await called3;
  const called4 = gen.nextCall();
  const second = svc.complete(request('def g():\n    return '));
  await called4;
  assert.equal(gen.calls.length, 2);
  const [a, b] = gen.calls;
  assert.ok(a.abortedAt !== undefined && a.abortedAt <= b.startedAt, 'the old one is aborted first');
  assert.equal(b.signal?.aborted, false);
  b.finish('g()');
  const [r1, r2] = await Promise.all([first, second]);
  assert.equal(r1.cancelled, true);
  assert.deepEqual(r1.items, []);
  assert.deepEqual(r2.items, ['g()']);
  // A cancelled result is not cached.
  assert.equal(svc.peek(request('x = ')), null);
});

test("service: the caller's cancel releases it at once, and the generation is aborted after the grace", async (t) => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const ac = new AbortController();
  const called5 = gen.nextCall();
  const p = svc.complete(request('x = '), ac.signal);
  await called5;
  // The grace is a timer started by the cancel: mocked from here, so the test does not depend on the machine's speed.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  ac.abort();
  const r = await p;
  assert.equal(r.cancelled, true);
  t.mock.timers.tick(REUSE_GRACE_MS - 1);
  assert.equal(gen.calls[0].signal?.aborted, false, 'kept a moment for the next keystroke');
  t.mock.timers.tick(1);
  assert.equal(gen.calls[0].signal?.aborted, true);
});

test('service: prefetch computes the suggestion after the shown one, so accepting it costs no model call', async () => {
  const gen = new FakeGenerator((prompt) => (prompt.endsWith('x = foo(1)<fim_middle>') || prompt.includes('x = foo(1)<fim_suffix>') ? '\nprint(x)' : 'foo(1)'));
  const svc = service(gen, { ...settings, prefetch: true });
  const r = await svc.complete(request('x = '));
  assert.deepEqual(r.items, ['foo(1)']);
  await svc.idle();
  assert.equal(gen.calls.length, 2, 'one prefetch');
  assert.ok(gen.calls[1].prompt.includes('x = foo(1)'), 'the prefetch prompt has the suggestion accepted');
  const after = await svc.complete(request('x = foo(1)'));
  assert.equal(after.source, 'cache');
  assert.equal(gen.calls.length, 2);
});

test('service: an explicit trigger asks for alternatives and does not reuse a single cached suggestion', async () => {
  const gen = new FakeGenerator(() => 'foo(1)');
  const svc = service(gen);
  await svc.complete(request('x = '));
  await svc.complete(request('x = ', 4, true));
  assert.equal(gen.calls.length, 2);
  assert.equal(gen.calls[1].options.numBeams, settings.alternatives);
  assert.equal(gen.calls[1].options.numReturnSequences, settings.alternatives);
});

test('service: the decode options follow the preset and the inline mode', async () => {
  const gen = new FakeGenerator(() => 'y');
  const svc = service(gen);
  await svc.complete(request('foo()', 4));
  await svc.complete(request('def f():\n    '));
  const [line, block] = gen.calls.map((c) => c.options);
  assert.equal(line.maxLines, 1);
  assert.equal(block.maxLines, settings.preset.maxLines);
  assert.equal(line.temperature, settings.preset.temperature);
  assert.ok(line.stop?.includes('<|endoftext|>'), 'the template stop tokens');
});

test('service: a failing generator fails the request with its error (no hang, nothing cached)', async () => {
  const failing = { generate: async () => Promise.reject(new Error('the inference worker exited (signal SIGKILL)')) };
  const svc = new CompletionService(
    failing,
    () => template,
    () => settings,
    () => ({ contextTokens: 1024 }),
  );
  await assert.rejects(svc.complete(request('x = ')), /worker exited/);
  await assert.rejects(svc.complete(request('x = '), new AbortController().signal), /worker exited/);
  assert.equal(svc.peek(request('x = ')), null);
});

test('service: close() retires it: what runs is aborted, nothing more reaches the generator, prefetches included', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen, { ...settings, prefetch: true });
  // A suggestion that arrives as the service is closed: shown, but its prefetch is not sent.
  const called6 = gen.nextCall();
  const finishing = svc.complete(request('x = '));
  await called6;
  gen.calls[0].finish('foo(1)');
  svc.close();
  assert.deepEqual((await finishing).items, ['foo(1)']);
  await svc.idle();
  assert.equal(gen.calls.length, 1, 'no prefetch after close');
  // A new request is answered as cancelled without a model call; a cached one still serves.
  const later = await svc.complete(request('y = '));
  assert.equal(later.cancelled, true);
  assert.equal(gen.calls.length, 1);
  assert.equal((await svc.complete(request('x = f'))).source, 'cache');
});

test('service: close() aborts the running generation', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const called7 = gen.nextCall();
  const running = svc.complete(request('x = '));
  await called7;
  gen.calls[0].stream('foo');
  svc.close();
  assert.equal(gen.calls[0].signal?.aborted, true);
  assert.deepEqual((await running).items, []);
});

test('service: a keystroke waits on the running generation only while its text agrees with what was typed', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const called8 = gen.nextCall();
  const first = svc.complete(request('x = '));
  await called8;
  // Typed before the model wrote anything: compatible, so it waits...
  const second = svc.complete(request('x = f'));
  await attached(); // it asks the model nothing: it waits on the running generation
  assert.equal(gen.calls.length, 1);
  // ...until the model writes something else: then the model is asked afresh at once, not after the first ends.
  const restarted = gen.nextCall();
  gen.calls[0].stream('bar');
  await restarted;
  assert.equal(gen.calls.length, 2, 'a new generation for the typed text');
  assert.equal(gen.calls[0].signal?.aborted, true, 'the disagreeing one is aborted');
  gen.calls[1].finish('oo(1)');
  assert.deepEqual((await second).items, ['oo(1)']);
  assert.equal((await first).cancelled, true);
});

test('service: typing what the model wrote, when its filters kept nothing, answers nothing without asking again', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  // The suggestion repeats the line above, which the filters drop.
  const called10 = gen.nextCall();
  const first = svc.complete(request('x = foo(1)\nx = '));
  await called10;
  const second = svc.complete(request('x = foo(1)\nx = f'));
  await attached(); // it asks the model nothing: it waits on the running generation
  gen.calls[0].stream('foo(1)');
  gen.calls[0].finish();
  assert.deepEqual((await first).items, []);
  const r = await second;
  assert.deepEqual(r.items, []);
  assert.equal(r.cancelled, false);
  assert.equal(gen.calls.length, 1, 'no second model call');
});

test("service: a block's first line is the answer as soon as it is written; the block goes on into the cache", async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const head = 'def f(x):\n    ';
  const called12 = gen.nextCall();
  const first = svc.complete(request(head));
  await called12;
  assert.equal(gen.calls[0].options.maxLines, settings.preset.maxLines, 'a block is asked for');
  gen.calls[0].stream('y = x');
  gen.calls[0].stream(' + 1\n    ret');
  const r1 = await first;
  assert.deepEqual(r1.items, ['y = x + 1'], 'the first line, before the block ends');
  assert.equal(r1.source, 'model');
  assert.ok(r1.fuller, 'with a promise of the whole block');
  assert.equal(gen.calls[0].signal?.aborted, false, 'the block is still being written');
  // A keystroke that types into that line is answered from it too, before the block ends.
  const r2 = await svc.complete(request(`${head}y =`));
  assert.equal(r2.source, 'inflight');
  assert.deepEqual(r2.items, [' x + 1']);
  gen.calls[0].stream('urn y\n');
  gen.calls[0].finish();
  assert.equal(await r1.fuller, true);
  // The editor asks again at the first place: the whole block, from the cache.
  const again = svc.peek(request(head));
  assert.deepEqual(again?.items, ['y = x + 1\n    return y']);
  assert.equal(gen.calls.length, 1, 'one model call for all of it');
  // A one-line request (code after the cursor) has no such promise.
  const called13 = gen.nextCall();
  const line = svc.complete(request('z = ()', 5));
  await called13;
  assert.equal(gen.calls[1].options.maxLines, 1);
  gen.calls[1].stream('1, 2\n');
  gen.calls[1].finish();
  assert.equal((await line).fuller, undefined);
});

test("service: a block's first line that leaves the cursor's block ends the answer there: the generation stops, nothing is shown now", async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  const head = 'def f(x):\n    y = x + 1\n    ';
  const called = gen.nextCall();
  const first = svc.complete(request(head));
  await called;
  let done = false;
  void first.then(() => (done = true));
  // The model moves on to the next top-level statement: the indentation filter would cut any answer there.
  gen.calls[0].stream('\nprint(f(1))\nprint(');
  await attached();
  assert.equal(done, true, 'answered at the first line');
  const r = await first;
  assert.deepEqual(r.items, []);
  assert.equal(r.source, 'model');
  assert.equal(r.cancelled, false);
  assert.equal(gen.calls[0].signal?.aborted, true, 'the rest is not written');
  assert.equal(svc.stoppedAtFirstLine, 1);

  // A first line dropped for another reason (a repeat of the line above) may begin an answer worth showing.
  const called2 = gen.nextCall();
  const second = svc.complete(request('def g(x):\n    total = x + 1\n    '));
  await called2;
  let answered = false;
  void second.then(() => (answered = true));
  gen.calls[1].stream('total = x + 1\n    return total\n');
  await attached();
  assert.equal(answered, false, 'the answer is waited for');
  assert.equal(gen.calls[1].signal?.aborted, false);
  gen.calls[1].finish();
  await second;
  assert.equal(svc.stoppedAtFirstLine, 1);
});

test('service: a first line still being written after partialLineMs is the answer as far as its last word; the whole line follows', async () => {
  const gen = new FakeGenerator();
  const svc = service(gen);
  // One line (code after the cursor): its complete line is the answer's end, so only a partial one comes early.
  const called = gen.nextCall();
  const first = svc.complete(request('total = compute()', 16));
  await called;
  const budget = gen.calls[0].options.partialLineMs ?? 0;
  assert.equal(budget, settings.preset.partialLineMs);
  assert.ok(budget > 0, 'the inline preset shows partial lines');
  let answered = false;
  void first.then(() => (answered = true));
  gen.calls[0].stream('prices, discou', budget - 1);
  await attached();
  assert.equal(answered, false, 'not before partialLineMs');
  gen.calls[0].stream('nt', budget);
  await attached();
  assert.equal(answered, true, 'answered while the line is still being written');
  const r1 = await first;
  assert.deepEqual(r1.items, ['prices,'], 'cut where the last whole word ends, not inside "discount"');
  assert.ok(r1.fuller, 'with a promise of the whole line');
  assert.equal(gen.calls[0].signal?.aborted, false, 'the line is still being written');
  gen.calls[0].stream('_rate');
  gen.calls[0].finish('prices, discount_rate');
  assert.equal(await r1.fuller, true);
  assert.deepEqual(svc.peek(request('total = compute()', 16))?.items, ['prices, discount_rate'], 'the whole line, from the cache');
  assert.equal(gen.calls.length, 1);

  // With partialLineMs 0 a one-line answer comes only when it is whole.
  const patient = service(gen, { ...settings, preset: { ...settings.preset, partialLineMs: 0 } });
  const called2 = gen.nextCall();
  const second = patient.complete(request('y = g()', 6));
  await called2;
  gen.calls[1].stream('alpha, be', 60_000);
  gen.calls[1].finish('alpha, beta');
  const r2 = await second;
  assert.deepEqual(r2.items, ['alpha, beta']);
  assert.equal(r2.fuller, undefined);
});

test('service: a first line on screen stays when the gate would hold its whole answer back (no ghost text that vanishes at the refresh)', async () => {
  const gen = new FakeGenerator();
  // A calibration that reads the mean log-probability: near-certain tokens score about 0.95, unsure ones about 0.
  const calibration = { version: 1 as const, model: 'test', features: ['mean_logprob' as const], mean: [0], scale: [1], weights: [3], bias: 3 };
  const svc = new CompletionService(
    gen,
    () => template,
    () => settings,
    () => ({ contextTokens: 1024, calibration }),
  );
  // A partial first line, confident on its own tokens; the whole line then comes out unsure.
  const called = gen.nextCall();
  const first = svc.complete(request('total = compute()', 16));
  await called;
  const budget = gen.calls[0].options.partialLineMs ?? 0;
  gen.calls[0].stream('prices, discou', budget);
  const r1 = await first;
  assert.deepEqual(r1.items, ['prices,']);
  gen.calls[0].finish('prices, discount_rate', -4);
  assert.equal(await r1.fuller, false, 'nothing new to show: no refresh');
  assert.deepEqual(svc.peek(request('total = compute()', 16))?.items, ['prices,'], 'the line on screen is what this place answers');
  assert.equal(svc.keptShownLines, 1);
  // A block: its first line shown, the whole block unsure.
  const head = 'def f(x):\n    ';
  const called2 = gen.nextCall();
  const block = svc.complete(request(head));
  await called2;
  gen.calls[1].stream('y = x + 1\n    ');
  const r2 = await block;
  assert.deepEqual(r2.items, ['y = x + 1']);
  gen.calls[1].finish('y = x + 1\n    return y', -4);
  assert.equal(await r2.fuller, false);
  assert.deepEqual(svc.peek(request(head))?.items, ['y = x + 1']);
  // A whole answer the gate shows replaces the line, as before.
  const called3 = gen.nextCall();
  const sure = svc.complete(request('def g(x):\n    '));
  await called3;
  gen.calls[2].stream('z = x\n    ');
  const r3 = await sure;
  gen.calls[2].finish('z = x\n    return z');
  assert.equal(await r3.fuller, true);
  assert.deepEqual(svc.peek(request('def g(x):\n    '))?.items, ['z = x\n    return z']);
  assert.equal(svc.keptShownLines, 2);
});
