import { median } from './stats';

/**
 * The machine's memory bandwidth as a large copy measures it (read + write of 256 MB buffers, far larger
 * than any CPU cache). Reported as bytes read per second, the figure a decode step is bound by.
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
