import * as fs from 'node:fs';
import { ConvertError } from './errors';

export function readJsonObject(file: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConvertError(file, `is not valid JSON (${(err as Error).message})`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ConvertError(file, 'must hold a JSON object');
  return v as Record<string, unknown>;
}

export function validateTokenizer(file: string): void {
  const tj = readJsonObject(file) as { model?: { vocab?: unknown } };
  if (!tj.model || typeof tj.model !== 'object' || !tj.model.vocab)
    throw new ConvertError(file, 'has no "model" with a "vocab": not a Hugging Face tokenizer.json');
}
