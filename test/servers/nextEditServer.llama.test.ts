// Next edit through a real llama.cpp server, as `ghostline.nextEdit.serverUrl` runs it: the Sweep prompt goes as
// text to /completion, the answer streams back through the same parse and checks as the local model's, and the
// stop strings end it. The served model is the bundled one (no next-edit model can be shipped), so what is
// checked is the wiring: a request that reaches the server and an answer that is judged, never a failure.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { EditHistory } from '../../src/completion/nextEdit/editHistory';
import { predictNextEdit } from '../../src/completion/nextEdit/predictNextEdit';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { ROOT } from '../helpers';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: (o?: { parallel?: number }) => Promise<{ url: string; stop: () => Promise<void> }>;
};

let server: { url: string; stop: () => Promise<void> };
before(async () => {
  server = await startLlamaServer({ parallel: 1 });
});
after(async () => server?.stop());

const BEFORE = 'def area(width, height):\n    """The area."""\n    return width * height\n\n\nprint(area(2, 3))\n';
const AFTER = BEFORE.replace('width, height)', 'width, depth)');

function request(signal?: AbortSignal) {
  const history = new EditHistory();
  history.record({ path: 'geo.py', offset: 16, removedLength: 6, removedText: 'height', insertedText: 'depth', atMs: 0, documentTextAfter: AFTER });
  return { path: 'geo.py', documentText: AFTER, cursorOffset: 21, history, signal };
}

test('a next edit from llama-server: the request reaches it, the answer streams back and is judged', async () => {
  const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 60_000 });
  const outcome = await predictNextEdit(gen, request());
  assert.ok(outcome.kind === 'edits' || !['failed', 'cancelled', 'noWindow', 'promptRefused'].includes(outcome.reason), JSON.stringify(outcome));
  assert.ok(outcome.prompt?.endsWith('<|file_sep|>updated/geo.py\n'));
  assert.ok(typeof outcome.answer === 'string', 'the server answered');
});

test('a cancelled request ends as cancelled, and a server that is not there is a failure with its reason', async () => {
  const ac = new AbortController();
  const pending = predictNextEdit(new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 60_000 }), request(ac.signal));
  ac.abort();
  assert.equal((await pending).kind === 'dropped' && (await pending).kind, 'dropped');
  const outcome = await pending;
  assert.equal(outcome.kind === 'dropped' ? outcome.reason : outcome.kind, 'cancelled');

  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const gone = await predictNextEdit(new ServerGenerator({ kind: 'llama.cpp', url: `http://127.0.0.1:${port}`, timeoutMs: 5_000 }), request());
  assert.equal(gone.kind, 'dropped');
  assert.equal(gone.kind === 'dropped' && gone.reason, 'failed');
  assert.ok(gone.kind === 'dropped' && (gone.detail ?? '').length > 0);
});
