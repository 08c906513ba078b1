import * as vscode from 'vscode';
import { CompletionService } from '../completion/completionService';
import type { ChunkRing } from '../completion/context/chunkRing';
import type { Generator } from '../completion/generator';
import type { FimTemplate } from '../completion/prompt/fimTemplates';
import type { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import type { ModelTraits } from '../completion/types';
import type { Config } from './config';

/** What every editor-side service shares, whichever generator it drives. */
export interface EditorServiceDeps {
  config: Config;
  /** Grammars load once per language, across model loads and backends. */
  syntax: SyntaxRefiner;
  /** The extra context from other files the user has visited: one ring, so a reload or a switch keeps it. */
  ring: ChunkRing;
}

/**
 * The pipeline as the editor runs it over one generator (the local model or a server): the settings of the
 * active document, and the syntax refiner and context ring shared by every service.
 */
export function editorService(generator: Generator, template: () => FimTemplate | null, traits: () => ModelTraits, deps: EditorServiceDeps): CompletionService {
  return new CompletionService(generator, template, () => deps.config.completion(vscode.window.activeTextEditor?.document), traits, deps.syntax, {
    ring: deps.ring,
  });
}
