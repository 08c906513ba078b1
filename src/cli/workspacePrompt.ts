import { CompletionService } from '../completion/completionService';
import { ChunkRing } from '../completion/context/chunkRing';
import type { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import { positionAt, textSource } from '../completion/context/documentContext';
import { createRepoContext } from '../completion/context/repo/createRepoContext';
import type { ContextProvider } from '../completion/context/repo/repoContext';
import type { ContextSource } from '../completion/context/repo/snippet';
import type { SourceFiles } from '../completion/context/repo/sourceFiles';
import type { Generator } from '../completion/generator';
import { pickFimTemplate, type FimTemplate } from '../completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../completion/settings';
import type { CompletionSettings, ExtraChunk, ModelTraits } from '../completion/types';
import { measureCharsPerToken } from '../engine/model/charsPerToken';
import { contextLength } from '../engine/model/folderAgreement';
import { readModelFolder } from '../engine/model/modelFolder';
import { TextTokenizer } from '../engine/model/tokenizer';
import { probeTokenizer } from '../engine/model/tokenizerProbe';
import { type Prompt, promptText } from '../engine/shared/prompt';

/** What a prompt is shaped by, read from a model folder without loading its graph. */
export interface PromptModel {
  template: FimTemplate | null;
  traits: ModelTraits;
}

export async function promptModel(dir: string): Promise<PromptModel> {
  const folder = readModelFolder(dir);
  await probeTokenizer(folder.dir); // the prompt is measured in its tokens: a tokenizer that stalls gets a message
  const tokenizer = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
  return {
    template: pickFimTemplate(Object.fromEntries(tokenizer.addedTokens)),
    traits: { contextTokens: contextLength(folder.config), charsPerToken: measureCharsPerToken(tokenizer) },
  };
}

/** A generator for a pipeline that only builds prompts: asking it to generate is a bug. */
const NO_GENERATION: Generator = {
  generate: () => Promise.reject(new Error('prompt building only: nothing is generated')),
};

export interface PromptAt {
  prompt: Prompt;
  text: string;
  context: { source: ContextSource | 'extra'; sources: readonly ContextSource[]; path: string; text: string }[];
}

/**
 * The prompt Ghostline sends for a position of a workspace file, with the repository context that the
 * editor-free sources find (imports, similar code): `ghostline prompt`, the context evaluation and its tests.
 */
export interface WorkspacePromptOptions {
  /** Sources on or off (default: the settings' defaults; `definitions` needs an editor and is off). */
  sources?: Partial<Record<ContextSource, boolean>>;
  settings?: CompletionSettings;
  repoName?: string;
  /** A generator to complete with (the context evaluation); without one, prompts are only built. */
  generator?: Generator;
  syntax?: SyntaxRefiner | null;
  /** Sources beside the editor-free ones (a bench's stand-in for the editor's definitions source). */
  more?: readonly ContextProvider[];
  /** How long one tree-sitter parse may run (see RepoContextParts.parseTimeoutMs). */
  parseTimeoutMs?: number;
}

export class WorkspacePrompts {
  private readonly repo;
  readonly service: CompletionService;
  /** The ring of recently used files (empty unless a caller simulates a history). */
  readonly ring = new ChunkRing();
  private readonly repoName?: string;

  constructor(
    files: SourceFiles,
    readonly model: PromptModel,
    opts: WorkspacePromptOptions = {},
  ) {
    const settings = opts.settings ?? defaultCompletionSettings();
    const on = { ...settings.context.sources, definitions: false, ...opts.sources };
    const withSources = { ...settings, context: { ...settings.context, sources: on } };
    this.repoName = opts.repoName;
    this.repo = createRepoContext({ files, enabled: (s) => on[s], deadlineMs: 5_000, more: opts.more, parseTimeoutMs: opts.parseTimeoutMs }).context;
    this.service = new CompletionService(
      opts.generator ?? NO_GENERATION,
      () => model.template,
      () => withSources,
      () => model.traits,
      opts.syntax ?? null,
      {
        repo: this.repo,
        ring: this.ring,
      },
    );
  }

  /** Gathers the context for a cursor line of `text` (the file at `path`), as the editor does ahead of a keystroke. */
  gather(path: string, text: string, line: number, languageId: string): Promise<void> {
    return this.repo.refresh({ path, languageId, length: text.length, text: () => text, line });
  }

  /**
   * The prompt at `line`/`character` (0-based) of `text`, the file at `path`. The next prompt in the file builds
   * on it as the editor's next request builds on the last (its window start and context hold).
   */
  async at(path: string, text: string, line: number, character: number, languageId: string): Promise<PromptAt> {
    const doc = textSource(text);
    await this.gather(path, text, line, languageId);
    const { prompt, extra } = this.service.promptFor(
      { doc, cursor: { line, character }, languageId, path, explicit: false, repoName: this.repoName },
      { asRequest: true },
    );
    return { prompt, text: promptText(prompt), context: extra.map(describe) };
  }

  /** The prompt with the cursor at a character offset of `text`. */
  atOffset(path: string, text: string, offset: number, languageId: string): Promise<PromptAt> {
    const p = positionAt(text, offset);
    return this.at(path, text, p.line, p.character, languageId);
  }
}

function describe(c: ExtraChunk): PromptAt['context'][number] {
  const sources = c.sources ?? [];
  return { source: sources[0] ?? 'extra', sources, path: c.path, text: c.text };
}
