import { fork, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker } from '../shared/protocol';
import { withHugePageMalloc } from './hugePageMalloc';

/**
 * Where the inference worker runs.
 * - 'process' (default): a forked child process. A native crash, an out-of-memory kill or a SIGKILL ends
 *   only the child; the editor's extension host lives on. Measured here: terminating a worker *thread*
 *   while onnxruntime-node is inside session.run aborts the whole host process (Napi::Error, SIGABRT).
 * - 'thread': a worker_threads Worker; cheaper to start, but shares the host's fate on a native crash.
 */
export type WorkerKind = 'process' | 'thread';

export interface WorkerHost {
  post(msg: ToWorker): void;
  /** Keeps the host process alive while requests are pending (and lets it exit when idle). */
  setBusy(busy: boolean): void;
  /** Ends the worker at once, as a crash would. */
  kill(): Promise<void>;
}

export interface WorkerEvents {
  message(msg: FromWorker): void;
  exit(reason: string): void;
}

export function startWorker(kind: WorkerKind, script: string, events: WorkerEvents): WorkerHost {
  return kind === 'thread' ? startThread(script, events) : startProcess(script, events);
}

function startProcess(script: string, events: WorkerEvents): WorkerHost {
  const child: ChildProcess = fork(script, [], {
    // Inside Electron (desktop VS Code) the executable must act as plain Node.
    env: withHugePageMalloc({ ...process.env, ELECTRON_RUN_AS_NODE: '1' }),
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let exited = false;
  const exit = (reason: string) => {
    if (exited) return;
    exited = true;
    events.exit(reason);
  };
  child.on('message', (m) => events.message(m as FromWorker));
  child.on('error', (err) => exit(`the inference worker failed: ${err.message}`));
  child.on('exit', (code, signal) => exit(`the inference worker exited (${signal ? `signal ${signal}` : `code ${code}`})`));
  child.unref();
  (child.channel as { unref?: () => void } | undefined)?.unref?.();
  return {
    post: (msg) => {
      if (child.connected) child.send(msg);
    },
    setBusy: (busy) => {
      const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
      if (busy) {
        child.ref();
        channel?.ref?.();
      } else {
        child.unref();
        channel?.unref?.();
      }
    },
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.ref(); // keep the caller alive until the child is really gone
        child.kill('SIGKILL');
      }),
  };
}

function startThread(script: string, events: WorkerEvents): WorkerHost {
  const w = new Worker(script);
  let exited = false;
  const exit = (reason: string) => {
    if (exited) return;
    exited = true;
    events.exit(reason);
  };
  w.on('message', (m: FromWorker) => events.message(m));
  w.on('error', (err) => exit(`the inference worker crashed: ${err.message}`));
  w.on('exit', (code) => exit(`the inference worker exited (code ${code})`));
  w.unref();
  return {
    post: (msg) => w.postMessage(msg),
    setBusy: (busy) => (busy ? w.ref() : w.unref()),
    kill: async () => {
      await w.terminate();
    },
  };
}
