import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { EngineClient } from '../../src/engine/host/client';
import { WORKER, copyModel } from '../helpers';

/**
 * A tokenizer whose pre-tokenizer regex backtracks exponentially on a run of `xq` pairs (`(xq|xq)+$`): its encode
 * is one synchronous call that no cancel can interrupt. The load's tokenizer check (tokenizerProbe.ts) probes runs
 * of single character classes, so this crafted pattern passes it, as one aimed at other text would: the
 * client's watchdog must kill and replace the worker.
 */
function slowTokenizerModel(): string {
  const dir = copyModel();
  const file = path.join(dir, 'tokenizer.json');
  const tok = JSON.parse(fs.readFileSync(file, 'utf8'));
  tok.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: '(xq|xq)+$|\\s+|\\S+' }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
  fs.writeFileSync(file, JSON.stringify(tok));
  return dir;
}

test('a worker stuck in a synchronous call is replaced after a cancel, and the next request works', async () => {
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
    // 40 `xq` pairs: about 2^40 regex steps, hours of work.
    // The worker says when the request's turn comes; it tokenizes synchronously right after, so from then on only
    // the watchdog can end it, however slow the machine.
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const stuck = client.generate(`x = ${'xq'.repeat(40)}!`, { maxNewTokens: 3 }, { signal: ac.signal, onStart: () => started() });
    await running;
    const cancelledAt = performance.now();
    ac.abort();
    const r = await stuck;
    const waited = performance.now() - cancelledAt;
    assert.equal(r.finishReason, 'cancelled');
    // Only the watchdog can end this call (the regex runs for hours), so the bound is loose: a loaded machine
    // may be slow to kill and answer, but nothing else ends the call within the minute.
    assert.ok(waited < 60_000, `the cancel was answered after ${Math.round(waited)} ms`);
    assert.equal(crashes.length, 1, 'one message');
    const [, watchdogMs] = /did not stop within (\d+) ms of a cancel/.exec(crashes[0]) ?? [];
    assert.ok(Number(watchdogMs) >= 1500, `the watchdog waits at least its grace (${crashes[0]})`);
    assert.ok(waited >= Number(watchdogMs) - 50, `the worker was given its grace before it was replaced (${Math.round(waited)} ms)`);
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

test('a cancelled request queued behind a long one is answered by the worker before the long one ends, and the healthy worker is kept', async () => {
  // A watchdog that cannot fire during the test: only the worker itself can answer the queued cancel.
  const client = new EngineClient({ workerPath: WORKER, cancelGraceMs: 600_000 });
  const crashes: string[] = [];
  client.onCrash = (m) => crashes.push(m);
  const dir = copyModel();
  try {
    await client.load(dir, { threads: 1 });
    const pid = (await client.workerStats()).pid;
    // A long generation (no cancel), then one queued behind it, cancelled once the long one is streaming.
    let streaming!: () => void;
    const started = new Promise<void>((r) => (streaming = r));
    const long = client.generate('x = 1\n', { maxNewTokens: 1000, ignoreEos: true, timeBudgetMs: 600_000 }, { onText: () => streaming() });
    const ac = new AbortController();
    const queued = client.generate('y = 2\n', { maxNewTokens: 5 }, { signal: ac.signal });
    await started;
    ac.abort();
    // Both depend on the machine's speed alike: a cancel answered between two steps beats hundreds of steps.
    const first = await Promise.race([queued.then(() => 'queued'), long.then(() => 'long')]);
    assert.equal(first, 'queued', 'the queued cancel did not wait for the long generation');
    assert.equal((await queued).finishReason, 'cancelled');
    const done = await long;
    assert.ok(done.stats.generatedTokens >= 400, `the long one ran to its end (${done.stats.generatedTokens} tokens)`);
    assert.deepEqual(crashes, []);
    assert.equal((await client.workerStats()).pid, pid);
  } finally {
    await client.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
