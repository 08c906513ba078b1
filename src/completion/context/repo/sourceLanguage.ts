/** The languages whose imports and declarations Ghostline reads without a language server (tree-sitter). */
export type SourceLanguage = 'typescript' | 'tsx' | 'javascript' | 'python';

const BY_EXTENSION: Record<string, SourceLanguage> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
};

/** The language of a workspace path by its extension, or undefined. */
export function languageOfPath(path: string): SourceLanguage | undefined {
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return undefined;
  const ext = path.slice(dot).toLowerCase();
  return Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext] : undefined;
}

/** The language family: imports of TypeScript and JavaScript resolve alike. */
export function isScript(lang: SourceLanguage): boolean {
  return lang !== 'python';
}
