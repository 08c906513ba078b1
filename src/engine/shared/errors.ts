/** A model folder that cannot be used: names the file and what is wrong with it. */
export class ModelFolderError extends Error {
  constructor(
    readonly file: string,
    readonly detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ModelFolderError';
  }
}

/** A request the engine refuses (bad decode option, empty prompt...). */
export class RequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestError';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The GPU could not be used: no WebGPU adapter or Vulkan loader, a driver error, a lost device. The CPU serves instead. */
export class GpuError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GpuError';
  }
}
