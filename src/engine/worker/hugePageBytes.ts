import * as fs from 'node:fs';

/** Bytes of this process's anonymous memory on transparent huge pages (Linux), or null where the kernel does not say. */
export function anonHugePageBytes(): number | null {
  try {
    const m = /^AnonHugePages:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
