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
