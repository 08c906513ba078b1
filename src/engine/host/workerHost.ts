import { fork, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker } from '../shared/protocol';
import { withHugePageMalloc } from './hugePageMalloc';
import { OutputTail } from './outputTail';

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
  /** The worker ended; `reason` ends with the last line it wrote to stderr, where it wrote one. */
  exit(reason: string): void;
  /** A line the worker wrote to stdout or stderr (onnxruntime's warnings, a native crash's last words). */
  output(line: string): void;
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
    // Piped, not inherited: inside the editor the extension host's own stderr is seen by no one, and the
    // worker's last words (a native loader's message, an abort) must reach Ghostline's log.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const tail = readOutput([child.stdout, child.stderr], events);
  let exited = false;
  const exit = (reason: string) => {
    if (exited) return;
    exited = true;
    events.exit(tail.explain(reason));
  };
  child.on('message', (m) => events.message(m as FromWorker));
  child.on('error', (err) => exit(`the inference worker failed: ${err.message}`));
  // 'close', not 'exit': it comes after the pipes are drained, so the last output is in the message.
  child.on('close', (code, signal) => exit(`the inference worker exited (${signal ? `signal ${signal}` : `code ${code}`})`));
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
  const w = new Worker(script, { stdout: true, stderr: true });
  const tail = readOutput([w.stdout, w.stderr], events);
  let exited = false;
  const exit = (reason: string) => {
    if (exited) return;
    exited = true;
    events.exit(tail.explain(reason));
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

/** Forwards the worker's output line by line and keeps the last of it for the exit message. */
function readOutput(streams: (Readable | null)[], events: WorkerEvents): OutputTail {
  const tail = new OutputTail();
  for (const stream of streams) {
    if (!stream) continue;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      for (const line of tail.push(chunk)) events.output(line);
    });
    // The pipes must not keep an idle host alive: the child's own ref (setBusy) decides that.
    (stream as { unref?: () => void }).unref?.();
  }
  return tail;
}
