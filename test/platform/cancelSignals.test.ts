import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { childProcessConverter } from '../../src/hub/childProcessConverter';
import { CANCEL_MESSAGE, onCancel } from '../../src/platform/cancelSignals';
import { ROOT } from '../helpers';

/** Stopping a conversion on each platform (docs/platforms.md): which signals and messages count. */

function fakeProcess(forked: boolean): EventEmitter & { send?: () => void } {
  const p = new EventEmitter() as EventEmitter & { send?: () => void };
  if (forked) p.send = () => undefined;
  return p;
}

test('Ctrl+C everywhere, SIGTERM on POSIX, Ctrl+Break on Windows; abort at most once', () => {
  for (const [platform, event, counts] of [
    ['linux', 'SIGINT', true],
    ['linux', 'SIGTERM', true],
    ['linux', 'SIGBREAK', false],
    ['darwin', 'SIGTERM', true],
    ['win32', 'SIGINT', true],
    ['win32', 'SIGBREAK', true],
    ['win32', 'SIGTERM', false], // never delivered there: kill('SIGTERM') is a hard kill
  ] as const) {
    const p = fakeProcess(false);
    let n = 0;
    onCancel(() => n++, p, platform);
    p.emit(event);
    p.emit('SIGINT');
    assert.equal(n, 1, `${platform} ${event}`);
    if (!counts) {
      const q = fakeProcess(false);
      let m = 0;
      onCancel(() => m++, q, platform);
      q.emit(event);
      assert.equal(m, 0, `${platform} ignores ${event}`);
    }
  }
});

test('forked: a cancel message or the parent going away aborts; other messages do not', () => {
  const p = fakeProcess(true);
  let n = 0;
  onCancel(() => n++, p, 'win32');
  p.emit('message', { type: 'progress' });
  p.emit('message', 'cancel');
  assert.equal(n, 0);
  p.emit('message', CANCEL_MESSAGE);
  p.emit('disconnect');
  assert.equal(n, 1);
  const q = fakeProcess(true);
  let m = 0;
  onCancel(() => m++, q, 'linux');
  q.emit('disconnect');
  assert.equal(m, 1);
  const notForked = fakeProcess(false);
  onCancel(() => assert.fail('not forked: no IPC'), notForked, 'win32');
  notForked.emit('message', CANCEL_MESSAGE);
});

test("the Windows way of cancelling the converter child (an IPC message): it stops and removes '<out>.converting'", async () => {
  const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-cancel-')), 'model');
  const ac = new AbortController();
  await assert.rejects(
    childProcessConverter(
      CLI,
      'win32',
    )({
      from: path.join(ROOT, 'test', 'fixtures', 'checkpoints', 'llama-untied'),
      out,
      quant: 'fp32',
      signal: ac.signal,
      onProgress: () => ac.abort(),
    }),
    /cancelled/,
  );
  assert.ok(!fs.existsSync(`${out}.converting`), 'the converter cleaned up: it was asked, not killed');
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
});
