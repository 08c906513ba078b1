import { ConvertError } from '../errors';
import type { GgufHeader, GgufValue } from './ggufFile';

/** Typed reads of GGUF metadata: a missing or mistyped key is named in the message. */

export function metaString(h: GgufHeader, key: string, fallback?: string): string {
  const v = h.metadata.get(key) ?? fallback;
  if (typeof v !== 'string') throw missing(h, key, 'a string', v);
  return v;
}

export function metaNumber(h: GgufHeader, key: string, fallback?: number): number {
  const v = h.metadata.get(key) ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw missing(h, key, 'a number', v);
  return v;
}

export function metaArray(h: GgufHeader, key: string, element: 'string' | 'number'): GgufValue[] {
  const v = h.metadata.get(key);
  if (!Array.isArray(v) || !v.every((e) => typeof e === element)) throw missing(h, key, `an array of ${element}s`, v);
  return v;
}

function missing(h: GgufHeader, key: string, want: string, got: GgufValue | undefined): ConvertError {
  const said = got === undefined ? 'is missing' : `is ${Array.isArray(got) ? 'an array' : JSON.stringify(typeof got === 'bigint' ? String(got) : got)}`;
  return new ConvertError(h.file, `metadata ${key} ${said}; it must be ${want}`);
}
