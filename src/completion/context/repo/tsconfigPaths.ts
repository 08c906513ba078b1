import { parse as parseJsonc } from 'jsonc-parser';
import { LRUCache } from 'lru-cache';
import { dirnameOf, joinPath, type SourceFiles } from './sourceFiles';
import { starMatch } from './starPattern';

/** A project's module mapping as TypeScript reads it: `baseUrl` and `paths`, as workspace folders. */
interface PathMapping {
  /** `compilerOptions.baseUrl`, resolved against the config that set it; null when none did. */
  baseUrl: string | null;
  /** `compilerOptions.paths` in their order; targets relative to `pathsBase`. */
  paths: [pattern: string, targets: string[]][];
  /** The folder `paths` targets are relative to: baseUrl, else the folder of the config that set `paths`. */
  pathsBase: string;
}

const CONFIG_NAMES = ['tsconfig.json', 'jsconfig.json'];
/**
 * Which config is nearest to a folder is looked up again after this long: every package import of every
 * gather would otherwise stat two names in each folder up to the root. Only a config created or deleted waits
 * for it; one edited is read again at once (by its stamp).
 */
const NEAREST_CONFIG_TTL_MS = 5000;
const nearestConfigs = new WeakMap<SourceFiles, LRUCache<string, string>>();
/** `extends` followed at most this deep (a cycle or a long chain ends there). */
const MAX_EXTENDS = 5;

// Parsed configs by SourceFiles, then by path and stamp: a config is read again only when it changes.
const parsed = new WeakMap<SourceFiles, LRUCache<string, { stamp: string; options: RawOptions | null }>>();

interface RawOptions {
  baseUrl?: string;
  paths?: [string, string[]][];
  /** The config's folder: its own relative `baseUrl`, `paths` and `extends` are read from there. */
  dir: string;
  extends?: string[];
}

/**
 * The workspace folders where a non-relative import (`@app/util`, `utils/x`) may live under the nearest
 * tsconfig.json or jsconfig.json above `from` (its `extends` chain within the workspace included), most
 * likely first: the `paths` pattern with the longest prefix that matches, each of its targets, then `baseUrl`.
 * Empty when no config maps it. Of a damaged config, what the parser recovers is used, as tsc reads past errors.
 */
export async function mappedImportBases(files: SourceFiles, from: string, specifier: string): Promise<string[]> {
  const mapping = await pathMappingFor(files, from);
  if (!mapping) return [];
  const out: string[] = [];
  // tsc's rule: an exact pattern, else the one with the longest part before its `*`.
  let best: { prefix: number; targets: string[]; star: string } | null = null;
  for (const [pattern, targets] of mapping.paths) {
    const star = starMatch(pattern, specifier);
    const prefix = pattern.includes('*') ? pattern.indexOf('*') : Number.POSITIVE_INFINITY;
    if (star !== null && (!best || prefix > best.prefix)) best = { prefix, targets, star };
  }
  for (const target of best?.targets ?? []) {
    const base = joinPath(mapping.pathsBase, target.replace('*', best?.star ?? ''));
    if (base !== null) out.push(base);
  }
  if (mapping.baseUrl !== null) {
    const base = joinPath(mapping.baseUrl, specifier);
    if (base !== null) out.push(base);
  }
  return out;
}

/** The mapping of the nearest config above `from`, or null when there is none or it maps nothing. */
async function pathMappingFor(files: SourceFiles, from: string): Promise<PathMapping | null> {
  const dir = dirnameOf(from);
  const nearest = cacheFor(nearestConfigs, files, () => new LRUCache<string, string>({ max: 256, ttl: NEAREST_CONFIG_TTL_MS }));
  let config = nearest.get(dir);
  if (config === undefined) {
    config = await findNearestConfig(files, dir);
    nearest.set(dir, config);
  }
  return config === '' ? null : mappingOf(files, config);
}

function cacheFor<C extends object>(caches: WeakMap<SourceFiles, C>, files: SourceFiles, create: () => C): C {
  const hit = caches.get(files);
  if (hit) return hit;
  const made = create();
  caches.set(files, made);
  return made;
}

/** The nearest config's path at or above `dir`, or '' when there is none. */
async function findNearestConfig(files: SourceFiles, dir: string): Promise<string> {
  for (let d = dir; ; d = dirnameOf(d)) {
    for (const name of CONFIG_NAMES) {
      const path = d ? `${d}/${name}` : name;
      if ((await files.stamp(path)) !== undefined) return path;
    }
    if (d === '') return '';
  }
}

async function mappingOf(files: SourceFiles, path: string): Promise<PathMapping | null> {
  const found: { baseUrl: string | null; paths?: [string, string[]][]; pathsDir: string } = { baseUrl: null, pathsDir: '' };
  // The config first, then what it extends, the last of an `extends` list first (it overrides the earlier
  // ones, as in tsc): the first setting of each option met wins.
  const seen = new Set<string>();
  const visit = async (config: string, depth: number): Promise<void> => {
    if (seen.has(config) || depth > MAX_EXTENDS) return;
    seen.add(config);
    const options = await readOptions(files, config);
    if (!options) return;
    if (found.baseUrl === null && options.baseUrl !== undefined) found.baseUrl = joinPath(options.dir, options.baseUrl);
    if (found.paths === undefined && options.paths !== undefined) {
      found.paths = options.paths;
      found.pathsDir = options.dir;
    }
    for (const e of [...(options.extends ?? [])].reverse()) {
      const target = extendedConfig(options.dir, e);
      if (target) await visit(target, depth + 1);
    }
  };
  await visit(path, 0);
  if (found.baseUrl === null && found.paths === undefined) return null;
  return { baseUrl: found.baseUrl, paths: found.paths ?? [], pathsBase: found.baseUrl ?? found.pathsDir };
}

/** A relative `extends` within the workspace (`./base`, `../tsconfig.base.json`); a package's is not followed. */
function extendedConfig(dir: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const path = joinPath(dir, spec);
  return path === null ? null : path.endsWith('.json') ? path : `${path}.json`;
}

async function readOptions(files: SourceFiles, path: string): Promise<RawOptions | null> {
  const stamp = (await files.stamp(path)) ?? '';
  const cache = cacheFor(parsed, files, () => new LRUCache<string, { stamp: string; options: RawOptions | null }>({ max: 64 }));
  const hit = cache.get(path);
  if (hit && stamp !== '' && hit.stamp === stamp) return hit.options;
  const text = await files.read(path);
  const options = text === undefined ? null : optionsOf(text, dirnameOf(path));
  cache.set(path, { stamp, options });
  return options;
}

/** The options Ghostline reads from a config's text (comments and trailing commas allowed, as tsc allows). */
function optionsOf(text: string, dir: string): RawOptions | null {
  const json: unknown = parseJsonc(text, [], { allowTrailingComma: true });
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const root = json as Record<string, unknown>;
  const co = (typeof root.compilerOptions === 'object' && root.compilerOptions !== null ? root.compilerOptions : {}) as Record<string, unknown>;
  const out: RawOptions = { dir };
  if (typeof co.baseUrl === 'string') out.baseUrl = co.baseUrl;
  if (typeof co.paths === 'object' && co.paths !== null && !Array.isArray(co.paths)) {
    out.paths = Object.entries(co.paths as Record<string, unknown>)
      .filter((e): e is [string, unknown[]] => Array.isArray(e[1]) && (e[0].match(/\*/g) ?? []).length <= 1)
      .map(([pattern, targets]) => [pattern, targets.filter((t): t is string => typeof t === 'string')]);
  }
  const ext = root.extends;
  const list = typeof ext === 'string' ? [ext] : Array.isArray(ext) ? ext.filter((e): e is string => typeof e === 'string') : [];
  if (list.length > 0) out.extends = list;
  return out;
}
