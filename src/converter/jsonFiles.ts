import { readJsonObjectFile } from '../engine/shared/jsonObjectFile';
import { ConvertError } from './errors';

export function readJsonObject(file: string): Record<string, unknown> {
  return readJsonObjectFile(file, (f, detail) => new ConvertError(f, detail));
}

export function validateTokenizer(file: string): void {
  const tj = readJsonObject(file) as { model?: { vocab?: unknown } };
  if (!tj.model || typeof tj.model !== 'object' || !tj.model.vocab)
    throw new ConvertError(file, 'has no "model" with a "vocab": not a Hugging Face tokenizer.json');
}
