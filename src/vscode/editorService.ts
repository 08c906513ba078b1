import * as vscode from 'vscode';
import { CompletionService } from '../completion/completionService';
import type { ChunkRing } from '../completion/context/chunkRing';
import type { ContextSupply } from '../completion/context/repo/extraContext';
import type { Generator } from '../completion/generator';
import type { FimTemplate } from '../completion/prompt/fimTemplates';
import type { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import type { ModelTraits } from '../completion/types';
import type { CalibrationStore } from './calibrationStore';
import type { Config } from './config';

/** What every editor-side service shares, whichever generator it drives. */
export interface EditorServiceDeps {
  config: Config;
  /** Grammars load once per language, across model loads and backends. */
  syntax: SyntaxRefiner;
  /** The extra context from other files the user has visited: one ring, so a reload or a switch keeps it. */
  ring: ChunkRing;
  /** Repository context gathered ahead of time (one per window, shared like the ring). */
  repo?: ContextSupply['repo'];
  /** Calibrations fitted on the user's own code ("Calibrate for This Workspace"), by model. */
  calibrations: CalibrationStore;
}

/** Which model each service runs, as the calibration store names it (calibrateCommand.ts asks). */
const modelKeys = new WeakMap<CompletionService, string>();
export const calibrationKeyOf = (service: CompletionService): string | undefined => modelKeys.get(service);

/**
 * The pipeline as the editor runs it over one generator (the local model or a server, `modelKey`): the settings
 * of the active document, the syntax refiner and context ring shared by every service, and the model's own
 * calibration when the user fitted one (it replaces the folder's or the generic one).
 */
export function editorService(
  generator: Generator,
  template: () => FimTemplate | null,
  traits: () => ModelTraits,
  deps: EditorServiceDeps,
  modelKey: string,
): CompletionService {
  const withOwn = (): ModelTraits => {
    const own = deps.calibrations.get(modelKey);
    return own ? { ...traits(), calibration: own, calibrationSource: `this workspace's (${String(own.fitted?.date ?? '').slice(0, 10)})` } : traits();
  };
  const service = new CompletionService(generator, template, () => deps.config.completion(vscode.window.activeTextEditor?.document), withOwn, deps.syntax, {
    ring: deps.ring,
    repo: deps.repo,
  });
  modelKeys.set(service, modelKey);
  return service;
}
