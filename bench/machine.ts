import * as fs from 'node:fs';

/** The CPU's vector instruction sets that matter to the 4-bit kernels (every speed number states them). */
export function cpuFlags(): string {
  try {
    const flags =
      fs
        .readFileSync('/proc/cpuinfo', 'utf8')
        .match(/^flags\s*:\s*(.*)$/m)?.[1]
        .split(' ') ?? [];
    return ['avx2', 'avx512f', 'avx512_vnni', 'avx_vnni', 'amx_int8'].filter((f) => flags.includes(f)).join(' ') || 'no AVX2';
  } catch {
    return 'unknown';
  }
}

/** The value after `--name` in a bench's arguments, or undefined. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}
