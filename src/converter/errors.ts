import * as fs from 'node:fs';

/** A checkpoint that cannot be converted: names the file (and tensor) and what is wrong. */
export class ConvertError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ConvertError';
  }
}

/** Opens a file for positioned reads; a file that cannot be opened is a ConvertError naming it and why. */
export function openForReading(file: string): number {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    throw new ConvertError(file, `cannot be opened (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
