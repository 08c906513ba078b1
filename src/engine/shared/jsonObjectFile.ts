import * as fs from 'node:fs';

/** A model's JSON files are far smaller (Qwen2.5-Coder's tokenizer.json: 7 MB); a larger one is not a model file. */
const MAX_JSON_BYTES = 256 << 20;

/**
 * A file holding one JSON object, for the model folder and the converter alike; `fail` makes the caller's own
 * error from the file and what is wrong. Only a regular file is read: a FIFO would block the reading thread
 * forever and /dev/zero would fill its memory.
 */
export function readJsonObjectFile(file: string, fail: (file: string, detail: string) => Error): Record<string, unknown> {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    throw fail(file, `cannot be read (${(err as Error).message})`);
  }
  if (!st.isFile()) throw fail(file, 'is not a regular file');
  if (st.size > MAX_JSON_BYTES) throw fail(file, `is ${Math.round(st.size / 2 ** 20)} MB, more than any model's JSON file`);
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw fail(file, `is not valid JSON (${(err as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw fail(file, 'must hold a JSON object');
  return value as Record<string, unknown>;
}
