import { repoPathProblem } from './repoRef';
import { SAFETENSORS_INDEX } from './recommended';

/**
 * The shard files named by a `model.safetensors.index.json` (`{"weight_map": {"tensor": "shard file"}}`),
 * each checked to be a plain relative path inside the repo before anything is downloaded. No `vscode` import.
 */

export class ShardIndexError extends Error {
  override readonly name = 'ShardIndexError';
}

/** Why `name` is not acceptable as a shard path, or undefined when it is. */
export function shardPathProblem(name: string): string | undefined {
  return repoPathProblem(name) ?? (name.endsWith('.safetensors') ? undefined : 'it is not a .safetensors file');
}

/** Shard names from the index text, deduplicated and in numeric order; throws ShardIndexError with the reason. */
export function shardNamesFromIndex(text: string, repo = ''): string[] {
  const where = repo ? `${repo}: ${SAFETENSORS_INDEX}` : SAFETENSORS_INDEX;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ShardIndexError(`${where} is not valid JSON (${(e as Error).message})`);
  }
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw new ShardIndexError(`${where} has no "weight_map" object`);
  const names = new Set<string>();
  for (const [tensor, file] of Object.entries(map as Record<string, unknown>)) {
    if (typeof file !== 'string') throw new ShardIndexError(`${where}: tensor "${tensor}" maps to ${JSON.stringify(file)}, not a file name`);
    const problem = shardPathProblem(file);
    if (problem) throw new ShardIndexError(`${where}: refusing shard "${file}" (tensor "${tensor}"): ${problem}. A shard must be a file inside the repo.`);
    names.add(file);
  }
  if (names.size === 0) throw new ShardIndexError(`${where} names no shard files`);
  return [...names].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}
