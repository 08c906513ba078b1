import { Worker } from 'node:worker_threads';
import { median } from './stats';

/**
 * The machine's memory bandwidth as a large copy measures it (read + write of 256 MB buffers, far larger
 * than any CPU cache), on one thread. Reported as bytes copied per second.
 */
export function measureCopyBandwidth(mb = 256, rounds = 5): number {
  const src = Buffer.alloc(mb * 1024 * 1024, 1);
  const dst = Buffer.alloc(mb * 1024 * 1024);
  src.copy(dst); // touch every page once
  const rates: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    src.copy(dst);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push(src.length / s);
  }
  return median(rates);
}

// Each thread compares two equal buffers (memcmp: reads both, writes nothing) between two barriers.
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
const { mb, rounds, flag } = workerData;
const a = Buffer.alloc(mb * 1024 * 1024, 7);
const b = Buffer.alloc(mb * 1024 * 1024, 7);
a.compare(b);
const sync = new Int32Array(flag);
parentPort.postMessage('ready');
Atomics.wait(sync, 0, 0);
const t0 = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) if (a.compare(b) !== 0) throw new Error('buffers differ');
const s = Number(process.hrtime.bigint() - t0) / 1e9;
parentPort.postMessage({ bytes: 2 * a.length * rounds, s });
`;

/**
 * Read bandwidth with `threads` threads at once (each memcmp-ing its own two 128 MB buffers): the limit a
 * decode step is bound by, since it reads the weights and writes almost nothing. Bytes read per second,
 * summed over the threads; median of `repeats` runs.
 */
export async function measureReadBandwidth(threads: number, mb = 128, rounds = 6, repeats = 3): Promise<number> {
  const results: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const flag = new SharedArrayBuffer(4);
    const sync = new Int32Array(flag);
    const workers = Array.from({ length: threads }, () => new Worker(READER, { eval: true, workerData: { mb, rounds, flag } }));
    const ready: Promise<void>[] = [];
    const done: Promise<{ bytes: number; s: number }>[] = [];
    for (const w of workers) {
      let markReady: () => void = () => undefined;
      ready.push(new Promise<void>((res) => (markReady = res)));
      done.push(
        new Promise((resolve, reject) => {
          w.on('message', (m) => (m === 'ready' ? markReady() : resolve(m)));
          w.once('error', reject);
        }),
      );
    }
    // Start all threads together once every one has its buffers ready (a failed thread rejects `done`).
    await Promise.race([Promise.all(ready), Promise.all(done)]);
    Atomics.store(sync, 0, 1);
    Atomics.notify(sync, 0);
    const parts = await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    // Threads run concurrently: total bytes over the slowest thread's time.
    results.push(parts.reduce((s, p) => s + p.bytes, 0) / Math.max(...parts.map((p) => p.s)));
  }
  return median(results);
}
