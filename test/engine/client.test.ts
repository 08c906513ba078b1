import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { EngineClient } from '../../src/engine/host/client';
import { type FirstLine, firstLineEnd } from '../../src/engine/shared/types';
import { TINY, WORKER, loadReference } from '../helpers';

const ref = loadReference();
const client = new EngineClient({ workerPath: WORKER });
after(async () => client.dispose());

test('the worker streams partial text that adds up to the result', async () => {
  await client.load(TINY, { threads: 1 });
  const parts: string[] = [];
  const r = await client.generate(ref.prompt, { maxNewTokens: 20, stopOnSpecialTokens: false }, { onText: (d) => parts.push(d) });
  assert.ok(parts.length > 1);
  assert.equal(parts.join(''), r.text);
  assert.equal(r.stats.generatedTokens, 20);
});

test("the first line with code on it is reported once, as it is written: its text and its tokens' log-probabilities", async () => {
  await client.load(TINY, { threads: 1 });
  // Sampled at a high temperature until an answer has such a line (the tiny model writes newlines rarely).
  for (let seed = 1; seed <= 40; seed++) {
    const lines: FirstLine[] = [];
    let streamedAtLine = '';
    let streamed = '';
    const r = await client.generate(
      ref.prompt,
      { maxNewTokens: 60, temperature: 1.5, seed, stopOnSpecialTokens: false },
      {
        onText: (d) => (streamed += d),
        onFirstLine: (l) => {
          lines.push(l);
          streamedAtLine = streamed;
        },
      },
    );
    const end = firstLineEnd(r.text);
    if (end < 0) {
      assert.equal(lines.length, 0, 'no line, no report');
      continue;
    }
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line.text, r.text.slice(0, end));
    assert.ok(streamedAtLine.length <= r.text.length && streamedAtLine.length > end, 'reported as soon as the newline was streamed');
    const k = line.tokenLogprobs.length;
    assert.deepEqual(line.tokenLogprobs, r.tokenLogprobs.slice(0, k));
    assert.ok(line.tokenTextEnds[k - 1] > end && (k === 1 || line.tokenTextEnds[k - 2] <= end), 'up to the token that wrote the newline');
    return;
  }
  assert.fail('no seed gave an answer with a complete first line');
});

test('with partialLineMs, a first line still being written is reported as far as a word end, with its tokens, and generation goes on', async () => {
  await client.load(TINY, { threads: 1 });
  // 1 ms: passed long before 60 tokens are decoded, on any machine (a model run alone takes longer).
  let partials = 0;
  let wentOn = 0;
  for (let seed = 1; seed <= 20; seed++) {
    const lines: FirstLine[] = [];
    const r = await client.generate(
      ref.prompt,
      { maxNewTokens: 60, temperature: 1.5, seed, stopOnSpecialTokens: false, partialLineMs: 1 },
      { onFirstLine: (l) => lines.push(l) },
    );
    assert.ok(lines.length <= 1, 'reported once');
    const [line] = lines;
    if (!line?.partial) continue;
    partials++;
    assert.ok(r.text.startsWith(line.text) && line.text.trim() !== '', 'a prefix of the answer, with code on it');
    assert.equal(line.text.includes('\n') && firstLineEnd(line.text) >= 0, false, 'not a complete line');
    // Where the line is reported depends on the machine's speed: it may be the answer's last word (EOS next).
    if (r.text.length > line.text.length) wentOn++;
    const next = r.text[line.text.length] ?? '';
    assert.ok(!/\w/.test(line.text.at(-1) ?? '') || !/\w/.test(next), `cut at a word end: ${JSON.stringify(line.text)} + ${JSON.stringify(next)}`);
    const k = line.tokenLogprobs.length;
    assert.deepEqual(line.tokenLogprobs, r.tokenLogprobs.slice(0, k));
    assert.equal(line.tokenTextEnds.at(-1) ?? 0, k === 0 ? 0 : line.text.length, 'ends at a token end');
  }
  assert.ok(partials > 0, 'some answer reported a partial first line');
  assert.ok(wentOn > 0, 'generation went on after a partial line');
});

test('cancel stops a generation within a few steps of the abort, far from its limit', async () => {
  const ac = new AbortController();
  let seenAtAbort = -1;
  let seen = 0;
  const r = await client.generate(
    ref.prompt,
    { maxNewTokens: 900, temperature: 1, seed: 3, stopOnSpecialTokens: false },
    {
      signal: ac.signal,
      onText: () => {
        seen++;
        if (seen === 5) {
          seenAtAbort = seen;
          ac.abort();
        }
      },
    },
  );
  assert.equal(r.finishReason, 'cancelled');
  assert.equal(seenAtAbort, 5, 'the abort came from the fifth streamed piece');
  // Messages already in flight when the abort was posted may add a few tokens, never hundreds.
  assert.ok(r.stats.generatedTokens < 40, `generated ${r.stats.generatedTokens} tokens after cancel`);
});

test('a request cancelled before it starts does no decoding', async () => {
  const ac = new AbortController();
  ac.abort();
  const r = await client.generate(`${ref.prompt} x`, { maxNewTokens: 50 }, { signal: ac.signal });
  assert.equal(r.finishReason, 'cancelled');
  assert.equal(r.stats.generatedTokens, 0);
});

test('a killed worker fails its pending request, and the next request starts a fresh one', async () => {
  let killed: Promise<void> | null = null;
  const pending = client.generate(
    ref.prompt,
    { maxNewTokens: 900, stopOnSpecialTokens: false, repetitionPenalty: 1.5 },
    { onText: () => (killed ??= client.killWorkerForTest()) },
  );
  await assert.rejects(pending, (err: Error) => err.name === 'WorkerDied' && /worker/.test(err.message));
  assert.ok(killed, 'the worker was killed mid-generation');
  const r = await client.generate(ref.prompt, { maxNewTokens: 5, stopOnSpecialTokens: false });
  assert.equal(r.stats.generatedTokens, 5);
  assert.equal(r.stats.reusedTokens, 0, 'the fresh worker starts with an empty cache');
});

test('a bad request is an error and the worker goes on', async () => {
  await assert.rejects(client.generate(ref.prompt, { topP: 3 }), /topP must be between 0 and 1/);
  await assert.rejects(client.generate('', {}), /prompt must be a non-empty string/);
  const r = await client.generate(ref.prompt, { maxNewTokens: 3, stopOnSpecialTokens: false });
  assert.equal(r.stats.generatedTokens, 3);
});

test('a worker thread works too, and disposing it mid-generation ends the request and the thread without taking the process down', async () => {
  const threaded = new EngineClient({ workerPath: WORKER, workerKind: 'thread' });
  await threaded.load(TINY, { threads: 1 });
  const r = await threaded.generate(ref.prompt, { maxNewTokens: 5, stopOnSpecialTokens: false });
  assert.equal(r.stats.generatedTokens, 5);
  let disposing: Promise<void> | null = null;
  const pending = threaded.generate(
    ref.prompt,
    { maxNewTokens: 900, stopOnSpecialTokens: false, repetitionPenalty: 1.5 },
    { onText: () => (disposing ??= threaded.dispose()) },
  );
  const outcome = await pending.then(
    (res) => res.finishReason,
    (err: Error) => err.name,
  );
  await disposing;
  assert.ok(outcome === 'cancelled' || outcome === 'EngineDisposed', `outcome ${outcome}`);
});

test('the worker reports its memory and cache', async () => {
  const s = await client.workerStats();
  assert.ok(s.pid > 0 && s.pid !== process.pid, 'a separate process');
  assert.ok(s.rssBytes > 10e6);
  await client.resetCache();
  assert.equal((await client.workerStats()).cachedTokens, 0, 'an empty cache after a reset');
  // The cache holds what was fed: the prompt and every generated token but the last (sampled, not yet fed).
  const first = await client.generate(ref.prompt, { maxNewTokens: 5, stopOnSpecialTokens: false });
  assert.equal(first.stats.promptTokens, ref.prompt_ids.length);
  assert.equal(first.stats.reusedTokens, 0);
  assert.equal((await client.workerStats()).cachedTokens, ref.prompt_ids.length + 5 - 1);
  // A second prompt that extends the first reuses the shared prefix of tokens.
  const longer = `${ref.prompt}xyz`;
  const ids = await client.tokenize(longer);
  let shared = 0;
  while (shared < ref.prompt_ids.length && ids[shared] === ref.prompt_ids[shared]) shared++;
  assert.ok(shared > 0 && ids.length > shared);
  const second = await client.generate(longer, { maxNewTokens: 3, stopOnSpecialTokens: false });
  assert.equal(second.stats.promptTokens, ids.length);
  assert.equal(second.stats.reusedTokens, shared);
  assert.equal(second.stats.prefillTokens, ids.length - shared);
  assert.equal((await client.workerStats()).cachedTokens, ids.length + 3 - 1);
});
