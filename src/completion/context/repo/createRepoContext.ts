import { CandidateFiles } from './candidateFiles';
import { ModuleIndex } from './moduleIndex';
import { SourceParser } from './parseSource';
import { importsProvider, receiversProvider, similarProvider } from './providers';
import { type ContextProvider, RepoContext, type RepoContextOptions } from './repoContext';
import type { Candidate } from './similarSnippets';
import type { SourceFiles } from './sourceFiles';

export interface RepoContextParts extends RepoContextOptions {
  files: SourceFiles;
  /** The editor's open documents (unsaved text included), searched first for similar code. */
  open?: () => Candidate[];
  /** Sources only an editor has (definitions through its language server). */
  more?: readonly ContextProvider[];
  /** Folder of the tree-sitter .wasm files (default: next to the bundle, else node_modules). */
  wasmDir?: string;
  /**
   * How long one tree-sitter parse may run (default: the editor's, which keeps its thread free). Benches that count
   * what is found, not how fast, raise it so their counts do not depend on the machine's load.
   */
  parseTimeoutMs?: number;
}

/** Repository context for a workspace: imports and similar code from its files, plus what the editor adds. */
export function createRepoContext(parts: RepoContextParts): { context: RepoContext; index: ModuleIndex } {
  const index = new ModuleIndex(parts.files, new SourceParser(parts.wasmDir, parts.parseTimeoutMs));
  const candidates = new CandidateFiles(parts.files, parts.open);
  const providers = [
    importsProvider(index),
    receiversProvider(index),
    similarProvider((at, signal) => candidates.candidates(at.path, signal)),
    ...(parts.more ?? []),
  ];
  return { context: new RepoContext(providers, parts), index };
}
