import * as fs from 'node:fs';
import type { Readable } from 'node:stream';
import { HubError } from './hubErrors';

/** Streaming one response body into a `.part` file, within a byte limit and a free-space watch. */

export interface BodyLimits {
  /** Most bytes this body may have; one more stops it with `tooLong()`. */
  max: number;
  tooLong: () => HubError;
  /** Async check every `every` bytes (free space); an error it returns stops the body. */
  space?: { every: number; check: () => Promise<HubError | undefined> };
}

/**
 * Streams a response body into the open `fd` and resolves with the byte count. Unlike `pipeline`, a body
 * that breaks off (or a cancel) still flushes every byte received to disk before the promise rejects, so a
 * resume starts exactly where the data stopped.
 */
export function writeBody(res: Readable, fd: number, part: string, limits: BodyLimits, onBytes: (n: number) => void, signal?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = fs.createWriteStream(part, { fd });
    let got = 0;
    let failure: unknown;
    let ended = false;
    const finish = (err?: unknown) => {
      if (ended) return;
      ended = true;
      failure ??= err;
      signal?.removeEventListener('abort', onAbort);
      res.removeListener('data', onData);
      ws.end();
    };
    const fail = (e: unknown) => {
      finish(e);
      res.destroy();
    };
    const onData = (chunk: Buffer) => {
      const before = got;
      got += chunk.length;
      if (got > limits.max) return fail(limits.tooLong()); // never write past what the file may have
      // Backpressure only when far behind: a paused body that breaks off loses what it had buffered.
      if (!ws.write(chunk) && ws.writableLength > 64 << 20 && !res.isPaused()) {
        res.pause();
        ws.once('drain', () => res.resume());
      }
      onBytes(got);
      const s = limits.space;
      if (s && Math.floor(got / s.every) > Math.floor(before / s.every)) {
        s.check().then(
          (e) => e && fail(e),
          () => undefined,
        );
      }
    };
    // The caller replaces this with its own cancel error (it knows the repo and file).
    const onAbort = () => fail(new HubError('cancelled', 'Download cancelled'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    res.on('data', onData);
    // The transport checks the length against Content-Length and errors a body cut short, so 'end' means
    // whole; a 'close' before it (the stream destroyed) is a cut.
    res.once('end', () => finish());
    res.once('error', (e) => finish(e));
    res.once('close', () => finish(prematureClose(got)));
    ws.once('error', (e) => {
      failure ??= e;
      res.destroy();
      reject(failure);
    });
    ws.once('finish', () => (failure ? reject(failure) : resolve(got)));
  });
}

function prematureClose(got: number): NodeJS.ErrnoException {
  const e = new Error(`connection closed after ${got} bytes of the body`) as NodeJS.ErrnoException;
  e.code = 'ECONNRESET';
  return e;
}
