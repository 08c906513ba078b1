// The inference worker: session.run blocks its thread, so the model never runs on the caller's thread.
import { parentPort } from 'node:worker_threads';
import { Engine } from './engine';
import { errorMessage } from './errors';
import type { FromWorker, ToWorker } from './protocol';

const port = parentPort;
if (!port) throw new Error('worker.ts must run in a worker thread');

let engine: Engine | null = null;
const running = new Map<number, AbortController>();
const send = (msg: FromWorker) => port.postMessage(msg);
const fail = (id: number, err: unknown) =>
  send({ type: 'error', id, message: errorMessage(err), name: err instanceof Error ? err.name : 'Error' });

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
    case 'cancel':
      running.get(msg.id)?.abort();
      return;
    case 'reset':
      engine?.resetCache();
      send({ type: 'ok', id: msg.id });
      return;
  }
});

async function load(id: number, dir: string, options: Parameters<typeof Engine.load>[1]) {
  try {
    const next = await Engine.load(dir, options);
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
  const ac = new AbortController();
  running.set(msg.id, ac);
  try {
    const result = await engine.generate(msg.prompt, msg.options, {
      signal: ac.signal,
      onText: msg.stream ? (text) => send({ type: 'partial', id: msg.id, text }) : undefined,
    });
    send({ type: 'done', id: msg.id, result });
  } catch (err) {
    fail(msg.id, err);
  } finally {
    running.delete(msg.id);
  }
}
