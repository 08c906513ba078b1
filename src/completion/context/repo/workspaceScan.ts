import { LRUCache } from 'lru-cache';
import type { SourceFiles } from './sourceFiles';

/** Source files a scan lists at most (the workspace listing's bound, nearest the root first). */
const SCAN_FILES = 4000;
/**
 * A scan is redone after this long: it lists the workspace and reads what is derived from it. A package
 * added or renamed waits for it; what the imports of known packages resolve to does not.
 */
const SCAN_TTL_MS = 30_000;

const scans = new WeakMap<SourceFiles, LRUCache<string, Promise<unknown>>>();

/**
 * What `derive` makes of the workspace's source files (a bounded listing), kept per SourceFiles and `key` for
 * SCAN_TTL_MS, so the import resolvers that need a view of the whole workspace list it once in that time.
 */
export function fromWorkspaceScan<T>(files: SourceFiles, key: string, derive: (listed: string[]) => Promise<T>): Promise<T> {
  let cache = scans.get(files);
  if (!cache) {
    cache = new LRUCache({ max: 8, ttl: SCAN_TTL_MS });
    scans.set(files, cache);
  }
  return cached(cache, `derived:${key}`, () => cached(cache, 'listing', () => files.list(SCAN_FILES)).then(derive));
}

function cached<T>(cache: LRUCache<string, Promise<unknown>>, key: string, make: () => Promise<T>): Promise<T> {
  const hit = cache.get(key) as Promise<T> | undefined;
  if (hit) return hit;
  const made = make();
  cache.set(key, made);
  return made;
}
