import * as path from 'node:path';
import type * as vscode from 'vscode';
import { ChunkRing } from '../completion/context/chunkRing';
import { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import { CalibrationStore } from './calibrationStore';
import type { Config } from './config';
import type { EditorServiceDeps } from './editorService';
import { EditorRepoContext } from './editorRepoContext';

/**
 * What every completion service of the window shares, whichever backend answers (the local model or a team
 * server) and across model loads: the grammars (loaded once per language), the ring of recently used code,
 * the repository context, and the calibrations fitted on the user's code. Owned here (extension.ts makes one);
 * the model loader and the backend router both use it, neither owns it.
 */
export class CompletionShared implements EditorServiceDeps, vscode.Disposable {
  readonly syntax: SyntaxRefiner;
  /** Fed by ringFeeder.ts. */
  readonly ring = new ChunkRing();
  readonly repo: EditorRepoContext;
  readonly calibrations: CalibrationStore;
  /** Where `auto` remembers which device ran each model faster on this machine (engine/worker/deviceVerdicts.ts). */
  readonly deviceVerdictFile: string;

  constructor(
    readonly config: Config,
    log: vscode.LogOutputChannel,
    storageDir: string,
  ) {
    this.syntax = new SyntaxRefiner({ log: (line) => log.info(line) });
    this.repo = new EditorRepoContext(config, log);
    this.calibrations = new CalibrationStore(path.join(storageDir, 'calibrations'));
    this.deviceVerdictFile = path.join(storageDir, 'device-verdicts.json');
  }

  dispose(): void {
    this.repo.dispose();
    this.syntax.dispose();
  }
}
