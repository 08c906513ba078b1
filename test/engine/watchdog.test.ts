import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { EngineClient } from '../../src/engine/host/client';
import { WORKER, copyModel } from '../helpers';

/**
 * A tokenizer whose pre-tokenizer regex backtracks exponentially on a run of `a`s (`(a|a)+$`): its encode is
 * one synchronous call that no cancel can interrupt. The client's watchdog must kill and replace the worker.
 */
function slowTokenizerModel(): string {
  const dir = copyModel();
  const file = path.join(dir, 'tokenizer.json');
  const tok = JSON.parse(fs.readFileSync(file, 'utf8'));
  tok.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: '(a|a)+$|\\s+|\\S+' }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
  fs.writeFileSync(file, JSON.stringify(tok));
  return dir;
}

test('a worker stuck in a synchronous call is replaced within 2 s of a cancel, and the next request works', async () => {
  const dir = slowTokenizerModel();
  const client = new EngineClient({ workerPath: WORKER });
  const crashes: string[] = [];
  client.onCrash = (m) => crashes.push(m);
  try {
    await client.load(dir, { threads: 1 });
    const before = await client.workerStats();
    const ok = await client.generate('def f(x):\n    return x', { maxNewTokens: 3 });
    assert.ok(ok.stats.promptTokens > 0, 'the tokenizer works on ordinary text');

    const ac = new AbortController();
    // 40 `a`s: about 2^40 regex steps, hours of work.
    const stuck = client.generate(`x = ${'a'.repeat(40)}!`, { maxNewTokens: 3 }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    const cancelledAt = performance.now();
    ac.abort();
    const r = await stuck;
    const waited = performance.now() - cancelledAt;
    assert.equal(r.finishReason, 'cancelled');
    assert.ok(waited < 2000, `the cancel was answered after ${Math.round(waited)} ms`);
    assert.equal(crashes.length, 1, 'one message');
    assert.match(crashes[0], /did not stop within \d+ ms of a cancel/);
    // The stuck process is gone, and a fresh worker (with the model loaded again) answers.
    await new Promise((r) => setTimeout(r, 100));
    assert.throws(() => process.kill(before.pid, 0), /ESRCH/);
    const again = await client.generate('def g(y):\n    return y', { maxNewTokens: 3 });
    assert.ok(again.stats.promptTokens > 0);
    assert.notEqual((await client.workerStats()).pid, before.pid);
  } finally {
    await client.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a cancelled request queued behind a long one is answered at once, and the healthy worker is kept', async () => {
  const client = new EngineClient({ workerPath: WORKER, cancelGraceMs: 300 });
  const crashes: string[] = [];
  client.onCrash = (m) => crashes.push(m);
  const dir = copyModel();
  try {
    await client.load(dir, { threads: 1 });
    const pid = (await client.workerStats()).pid;
    // A long generation (no cancel), then one queued behind it that is cancelled at once.
    const long = client.generate('x = 1\n', { maxNewTokens: 400, ignoreEos: true, timeBudgetMs: 10_000 });
    const ac = new AbortController();
    const queued = client.generate('y = 2\n', { maxNewTokens: 5 }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 20));
    const t0 = performance.now();
    ac.abort();
    assert.equal((await queued).finishReason, 'cancelled');
    assert.ok(performance.now() - t0 < 300, 'answered before the watchdog would fire');
    const done = await long;
    assert.equal(done.stats.generatedTokens, 400);
    assert.deepEqual(crashes, []);
    assert.equal((await client.workerStats()).pid, pid);
  } finally {
    await client.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
