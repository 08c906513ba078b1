/**
 * What stops a running `ghostline convert` on every platform:
 * - SIGINT: Ctrl+C in a terminal (Node emits it on Windows too);
 * - SIGTERM: POSIX only; on Windows no process ever receives it (`kill('SIGTERM')` there is TerminateProcess);
 * - SIGBREAK: Ctrl+Break in a Windows console;
 * - `{ type: 'cancel' }` over the IPC channel, when forked (src/hub/childProcessConverter.ts uses it on
 *   Windows, where a signal could only kill the converter before it removes its `<out>.converting` folder);
 * - the IPC channel closing: the extension host that forked it is gone, so nobody waits for the result.
 */

export interface CancelSource {
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  send?: unknown;
}

export const CANCEL_MESSAGE = { type: 'cancel' } as const;

function isCancelMessage(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'cancel';
}

/** Calls `abort` (at most once) on any of the above. The CLI exits through process.exit, so the IPC listener keeps nothing alive. */
export function onCancel(abort: () => void, proc: CancelSource = process, platform: NodeJS.Platform = process.platform): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    abort();
  };
  proc.once('SIGINT', once);
  if (platform === 'win32') proc.once('SIGBREAK', once);
  else proc.once('SIGTERM', once);
  if (typeof proc.send === 'function') {
    proc.on('message', (m) => {
      if (isCancelMessage(m)) once();
    });
    proc.once('disconnect', once);
  }
}
