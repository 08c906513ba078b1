import { CompletionService } from '../completion/completionService';
import { positionAt, textSource } from '../completion/context/documentContext';
import { createRepoContext } from '../completion/context/repo/createRepoContext';
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
import { type Prompt, promptText } from '../engine/shared/prompt';

/** What a prompt is shaped by, read from a model folder without loading its graph. */
export interface PromptModel {
  template: FimTemplate | null;
  traits: ModelTraits;
}

export function promptModel(dir: string): PromptModel {
  const folder = readModelFolder(dir);
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
export class WorkspacePrompts {
  private readonly repo;
  private readonly service: CompletionService;

  constructor(
    files: SourceFiles,
    readonly model: PromptModel,
    sources: Partial<Record<ContextSource, boolean>> = {},
    settings: CompletionSettings = defaultCompletionSettings(),
    private readonly repoName?: string,
  ) {
    const on = { ...settings.context.sources, definitions: false, ...sources };
    const withSources = { ...settings, context: { ...settings.context, sources: on } };
    this.repo = createRepoContext({ files, enabled: (s) => on[s], deadlineMs: 5_000 }).context;
    this.service = new CompletionService(
      NO_GENERATION,
      () => model.template,
      () => withSources,
      () => model.traits,
      null,
      { repo: this.repo },
    );
  }

  /** The prompt at `line`/`character` (0-based) of `text`, the file at `path`. */
  async at(path: string, text: string, line: number, character: number, languageId: string): Promise<PromptAt> {
    const doc = textSource(text);
    await this.repo.refresh({ path, languageId, length: text.length, text: () => text, line });
    const { prompt, extra } = this.service.promptFor({ doc, cursor: { line, character }, languageId, path, explicit: false, repoName: this.repoName });
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
