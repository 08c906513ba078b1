// Hugging Face repo ids, revisions and file paths: what is valid, and the URL of a file. No I/O.
import { HubError } from './hubErrors';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Why `id` is not a Hugging Face repo id (`owner/name`), or undefined when it is one. */
export function repoIdProblem(id: string): string | undefined {
  const s = id.trim();
  if (!s) return 'Enter a repo id such as onnx-community/Qwen2.5-Coder-0.5B-Instruct';
  const parts = s.split('/');
  if (parts.length !== 2) return 'A repo id has the form owner/name (exactly one "/")';
  for (const p of parts) {
    if (!SEGMENT.test(p)) return `"${p}": letters, digits, ".", "_" and "-" only, not starting with a symbol`;
    if (p.length > 96) return `"${p}" is too long`;
    if (p.includes('..') || p.includes('--')) return `"${p}": ".." and "--" are not allowed`;
    if (p.endsWith('.') || p.endsWith('.git')) return `"${p}" cannot end with "." or ".git"`;
  }
  return undefined;
}

/**
 * Why `p` is not a plain relative file path inside a repo, or undefined when it is. Checked before any request
 * (the hub normalises `a/../x` itself) and before joining it to a local folder: no absolute path or drive letter,
 * no backslash or control character, and no empty, "." or ".." segment, so it can never leave the folder or
 * name the folder itself. Dot-and-space-only segments ("...", ". ") are refused too: Windows strips trailing
 * dots and spaces, which would turn them into "." or "..".
 */
export function repoPathProblem(p: string): string | undefined {
  if (typeof p !== 'string') return 'it is not a string';
  if (p.length === 0) return 'it is empty';
  if (p.includes('\\')) return 'it contains a backslash';
  if (p.includes('\0')) return 'it contains a NUL byte';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this check's purpose
  if (/[\x01-\x1f\x7f-\x9f]/.test(p)) return 'it contains a control character';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'it is an absolute path';
  const segs = p.split('/');
  const dotty = segs.filter((s) => /^[.\s]*$/.test(s)); // "", ".", "..", "...", ". "
  if (dotty.some((s) => s.includes('..'))) return 'it has a ".." segment, which leaves the repo folder (or comes back to it)';
  if (dotty.length === segs.length) return 'it names the repo folder itself, not a file';
  if (dotty.length > 0) return 'it has an empty or "." segment';
  return undefined;
}

/** `owner/name` or `owner/name@revision` (a branch, tag or commit). */
export function parseRepoRef(input: string): { repo: string; revision: string } {
  const s = input
    .trim()
    .replace(/^https?:\/\/[^/]+\//, '')
    .replace(/\/(tree|blob)\/([^/]+).*$/, '@$2');
  const at = s.indexOf('@');
  const repo = at < 0 ? s : s.slice(0, at);
  const revision = at < 0 ? 'main' : s.slice(at + 1);
  const problem = repoIdProblem(repo);
  if (problem) throw new HubError('not_found', `"${input}": ${problem}`);
  if (!revision || /[\s]/.test(revision) || revision.includes('..')) throw new HubError('not_found', `"${input}": invalid revision "${revision}"`);
  return { repo, revision };
}

export function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

/** `{endpoint}/{repo}/resolve/{revision}/{file}` */
export function resolveUrl(endpoint: string, repo: string, revision: string, file: string): string {
  return `${endpoint.replace(/\/+$/, '')}/${encodePath(repo)}/resolve/${encodeURIComponent(revision)}/${encodePath(file)}`;
}
