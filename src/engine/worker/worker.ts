// The inference worker: session.run blocks its thread, so the model never runs on the caller's thread.
// It runs as a child process (default: a native crash or a kill cannot take the editor down) or as a
// worker thread; the messages are the same.
import { parentPort } from 'node:worker_threads';
import type { Engine } from './engine';
import { anonHugePageBytes } from './hugePageBytes';
import { loadEngineModule } from './loadEngine';
import { cancelledResult } from '../shared/cancelledResult';
import { errorMessage } from '../shared/errors';
import type { FromWorker, ToWorker } from '../shared/protocol';

interface Port {
  on(event: 'message', listener: (msg: ToWorker) => void): unknown;
  postMessage(msg: FromWorker): void;
}

function connect(): Port {
  if (parentPort) return parentPort;
  const send = process.send?.bind(process);
  if (!send) throw new Error('worker.js must run as a worker thread or a forked child process');
  // The parent's death must not leave an orphan holding a model in memory.
  process.on('disconnect', () => process.exit(0));
  return { on: (event, listener) => process.on(event, listener), postMessage: (msg) => send(msg) };
}

const port = connect();

let engine: Engine | null = null;
/** Generations received and not answered; `started` once the engine runs them (they queue one at a time). */
const running = new Map<number, { ac: AbortController; started: boolean }>();
const send = (msg: FromWorker) => port.postMessage(msg);
const fail = (id: number, err: unknown) => send({ type: 'error', id, message: errorMessage(err), name: err instanceof Error ? err.name : 'Error' });

port.on('message', (msg: ToWorker) => {
  switch (msg.type) {
    case 'load':
      void load(msg.id, msg.modelDir, msg.options);
      return;
    case 'generate':
      void generate(msg);
      return;
    case 'tokenize':
      if (!engine) return fail(msg.id, new Error('no model loaded'));
      try {
        send({ type: 'tokens', id: msg.id, ids: engine.tokenize(msg.text) });
      } catch (err) {
        fail(msg.id, err);
      }
      return;
    case 'cancel': {
      const job = running.get(msg.id);
      if (!job) return;
      job.ac.abort();
      // One still queued behind another is answered now, so its cancel never waits for the running one
      // (the client's watchdog would take that wait for a stuck worker). Its late answer is ignored.
      if (!job.started) send({ type: 'done', id: msg.id, result: cancelledResult() });
      return;
    }
    case 'reset':
      engine?.resetCache();
      send({ type: 'ok', id: msg.id });
      return;
    case 'stats':
      send({
        type: 'stats',
        id: msg.id,
        stats: {
          pid: process.pid,
          rssBytes: process.memoryUsage().rss,
          heapUsedBytes: process.memoryUsage().heapUsed,
          cachedTokens: engine?.cachedTokens ?? 0,
          hugePageBytes: anonHugePageBytes(),
          glibcTunables: process.env.GLIBC_TUNABLES ?? null,
          gpuCache: engine?.gpuCache ?? null,
        },
      });
      return;
    case 'shutdown':
      // Between steps, never inside session.run: terminating a thread mid-run aborts the whole process.
      for (const job of running.values()) job.ac.abort();
      void (engine?.dispose() ?? Promise.resolve()).finally(() => {
        send({ type: 'ok', id: msg.id });
        if (parentPort) parentPort.close();
        else process.exit(0);
      });
      return;
  }
});

async function load(id: number, dir: string, options: Parameters<typeof Engine.load>[1]) {
  try {
    const next = await (await loadEngineModule()).Engine.load(dir, options, {
      onDeviceChange: (report) => send({ type: 'device', id: 0, report: { ...report } }),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const old = engine;
    engine = next;
    if (old) await old.dispose(); // frees the old session's memory
    send({ type: 'loaded', id, info: next.info });
  } catch (err) {
    fail(id, err);
  }
}

async function generate(msg: Extract<ToWorker, { type: 'generate' }>) {
  if (!engine) return fail(msg.id, new Error('no model loaded'));
  const job = { ac: new AbortController(), started: false };
  running.set(msg.id, job);
  try {
    const result = await engine.generate(msg.prompt, msg.options, {
      signal: job.ac.signal,
      onStart: () => {
        job.started = true;
        if (msg.notifyStart) send({ type: 'start', id: msg.id });
      },
      onText: msg.stream ? (text) => send({ type: 'partial', id: msg.id, text }) : undefined,
      onFirstLine: msg.stream ? (line) => send({ type: 'line', id: msg.id, line }) : undefined,
      prefillChunk: msg.prefillChunk,
    });
    send({ type: 'done', id: msg.id, result });
  } catch (err) {
    fail(msg.id, err);
  } finally {
    running.delete(msg.id);
  }
}
