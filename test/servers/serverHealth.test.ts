/** Backoff after server failures, and requests failing fast (no connection) while the server is in backoff. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HealthCheckedGenerator } from '../../src/servers/healthCheckedGenerator';
import { ServerError } from '../../src/servers/serverErrors';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { ServerHealth } from '../../src/servers/serverHealth';
import { stubServer } from './stubServers';

test('backoff doubles with each failure in a row up to the cap, honours Retry-After, and a success resets it', () => {
  let now = 0;
  const changes: string[] = [];
  const h = new ServerHealth(() => now, 1000, 8000);
  h.onChange = (s) => changes.push(s);
  assert.equal(h.available(), true);
  const waits: number[] = [];
  for (let i = 0; i < 5; i++) {
    h.failed(new Error('refused'));
    waits.push(h.retryInMs());
    assert.equal(h.available(), false);
    now += h.retryInMs();
    assert.equal(h.available(), true, 'tried again once the backoff has passed');
  }
  assert.deepEqual(waits, [1000, 2000, 4000, 8000, 8000]);
  h.failed(new ServerError('busy', true, 20_000));
  assert.equal(h.retryInMs(), 20_000, 'Retry-After beyond the backoff wins');
  h.succeeded();
  assert.equal(h.state, 'up');
  h.failed(new Error('again'));
  assert.equal(h.retryInMs(), 1000, 'a success starts the backoff over');
  assert.deepEqual(changes, ['down', 'up', 'down'], 'one change per flip, not per failure');
});

test('while the server is in backoff, requests fail at once without connecting; after it, the server is asked again', async () => {
  let answer = false;
  let connections = 0;
  const stub = await stubServer((_req, res) => {
    connections++;
    if (!answer) {
      res.writeHead(503, { 'retry-after': '0' }).end('loading model');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify({ content: 'x = 1', stop: true, stop_type: 'eos', timings: {} })}\n\n`);
  });
  try {
    let now = 0;
    const health = new ServerHealth(() => now, 5000);
    const gen = new HealthCheckedGenerator(new ServerGenerator({ kind: 'llama.cpp', url: stub.url, timeoutMs: 5000 }), health);
    await assert.rejects(gen.generate('a', { maxNewTokens: 4 }), /busy/);
    assert.equal(connections, 1);
    assert.equal(health.state, 'down');
    await assert.rejects(gen.generate('a', { maxNewTokens: 4 }), /unavailable \(.*busy.*\); trying again in 5 s/);
    assert.equal(connections, 1, 'no request while in backoff');
    answer = true;
    now += 5000;
    const r = await gen.generate('a', { maxNewTokens: 4 });
    assert.equal(r.text, 'x = 1');
    assert.equal(connections, 2);
    assert.equal(health.state, 'up');
  } finally {
    await stub.close();
  }
});

test('a cancelled request does not count as the server answering', async () => {
  let now = 0;
  const health = new ServerHealth(() => now, 1000);
  health.failed(new Error('refused'));
  now = 2000; // past the backoff: the request may go
  const gen = new HealthCheckedGenerator(new ServerGenerator({ kind: 'llama.cpp', url: 'http://127.0.0.1:9', timeoutMs: 1000 }), health);
  const ac = new AbortController();
  ac.abort();
  const r = await gen.generate('a', {}, { signal: ac.signal });
  assert.equal(r.finishReason, 'cancelled');
  assert.equal(health.state, 'down');
});
