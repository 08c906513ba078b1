import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { curveSvg, reportMarkdown } from '../completion/calibrate/calibrationReport';
import { type CalibrationSample, fitWorkspace, tooFew, type WorkspaceCalibrationReport } from '../completion/calibrate/fitWorkspace';
import { exactRestOfLine } from '../completion/calibrate/keptMatch';
import { pickPositions, textBeforeTyping, type WorkspaceFile } from '../completion/calibrate/workspacePositions';
import type { CompletionService } from '../completion/completionService';
import { positionAt, textSource } from '../completion/context/documentContext';
import type { CalibrationStore } from './calibrationStore';
import { calibrationKeyOf } from './editorService';
import type { StatusBar } from './statusBar';

export interface CalibrateDeps {
  /** The service suggestions come from now (the local model or a server), and its model's name. */
  active: () => { service: CompletionService; name: string } | null;
  calibrations: CalibrationStore;
  status: StatusBar;
  log: vscode.LogOutputChannel;
}

/** Arguments for tests and scripted runs; the palette command takes none. */
export interface CalibrateArgs {
  positions?: number;
  /** A glob of the files to sample (default: every source file the languages below cover). */
  include?: string;
  /** Open the report (default true). */
  report?: boolean;
}

const LANGUAGES: Record<string, string> = {
  py: 'python',
  ts: 'typescript',
  tsx: 'typescriptreact',
  js: 'javascript',
  jsx: 'javascriptreact',
  mjs: 'javascript',
  cjs: 'javascript',
  go: 'go',
  rs: 'rust',
  java: 'java',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  hpp: 'cpp',
  cs: 'csharp',
  rb: 'ruby',
  php: 'php',
  lua: 'lua',
  sh: 'shellscript',
  kt: 'kotlin',
  swift: 'swift',
  scala: 'scala',
};
const INCLUDE = `**/*.{${Object.keys(LANGUAGES).join(',')}}`;
const EXCLUDE = '{**/node_modules/**,**/.git/**,**/dist/**,**/out/**,**/build/**,**/target/**,**/.venv/**,**/venv/**,**/vendor/**,**/*.min.js}';
const MAX_FILES = 400;
/** Bigger files are generated or data more often than code a user types. */
const MAX_FILE_BYTES = 256 * 1024;
const DEFAULT_POSITIONS = 200;

/**
 * Ghostline: Calibrate for This Workspace. The model in use completes sampled positions of the user's own files
 * (the truth is what is there; nothing leaves the machine), every suggestion past the gate, and the gate is
 * refitted on what came back: that model's own calibration, saved in global storage and used from then on.
 * Runs in the background with a cancellable progress notification, and gives way while the editor itself
 * is waiting for a suggestion. Returns the report (undefined when cancelled or impossible).
 */
export async function calibrateWorkspace(d: CalibrateDeps, args: CalibrateArgs = {}): Promise<WorkspaceCalibrationReport | undefined> {
  const active = d.active();
  const key = active ? calibrationKeyOf(active.service) : undefined;
  if (!active || !key) {
    void vscode.window.showErrorMessage('Ghostline: no model is ready to calibrate (see Ghostline: Show Log).');
    return undefined;
  }
  const files = await readWorkspaceFiles(args.include ?? INCLUDE);
  const positions = pickPositions(files, args.positions ?? DEFAULT_POSITIONS, 1);
  if (positions.length === 0) {
    void vscode.window.showWarningMessage('Ghostline: this workspace has no source files to calibrate on.');
    return undefined;
  }
  d.log.info(`calibrating ${active.name} on ${positions.length} positions in ${files.length} files`);
  const settings = { prefetch: false, minConfidence: 0 };
  const service = active.service.withSettings(settings);
  const samples: CalibrationSample[] = [];
  const cancelled = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Ghostline: calibrating ${active.name} on this workspace`, cancellable: true },
    async (progress, token) => {
      for (const [i, p] of positions.entries()) {
        if (token.isCancellationRequested) return true;
        // Low priority: the user's own suggestions first.
        while (d.status.busy && !token.isCancellationRequested) await new Promise((r) => setTimeout(r, 200));
        const text = textBeforeTyping(p);
        const out = await service.complete({
          doc: textSource(text),
          cursor: positionAt(text, p.offset),
          languageId: p.file.languageId,
          path: p.file.path,
          explicit: false,
        });
        const suggestion = out.items[0] ?? '';
        samples.push({ path: p.file.path, features: suggestion.trim() !== '' ? (out.features ?? null) : null, exact: exactRestOfLine(suggestion, p.expected) });
        progress.report({ message: `${i + 1} of ${positions.length}`, increment: 100 / positions.length });
      }
      return false;
    },
  );
  if (cancelled) {
    d.log.info(`calibration cancelled after ${samples.length} positions; the model keeps its calibration`);
    return undefined;
  }
  const problem = tooFew(samples);
  if (problem) {
    d.log.warn(`calibration not saved: ${problem}`);
    void vscode.window.showWarningMessage(`Ghostline could not calibrate ${active.name}: ${problem}.`);
    return undefined;
  }
  const threshold = active.service.currentSettings.minConfidence;
  const before = active.service.traits;
  const { calibration, report } = fitWorkspace(samples, active.name, threshold, {
    calibration: before.calibration,
    source: before.calibrationSource ?? 'none',
  });
  // The fit is saved only when it is not worse than what the model had (keepBetterFit); the report is written either way.
  const dir = report.inUse === 'own' ? await d.calibrations.save(key, calibration, report) : d.calibrations.reportFolder(key);
  fs.writeFileSync(path.join(dir, 'curve.svg'), curveSvg(report.curve, report.threshold));
  const md = path.join(dir, 'ghostline-calibration-report.md');
  fs.writeFileSync(md, reportMarkdown(report, 'curve.svg'));
  d.log.info(
    `calibrated ${active.name} (in use: ${report.inUse === 'own' ? "this workspace's fit" : report.before.source}; ${report.why}): ${report.suggested} suggestions on ${report.positions} positions; at ${threshold}: shown ${report.own.shown.toFixed(3)}, ` +
      `precision ${report.own.precision.toFixed(3)} (before: ${report.before.shown.toFixed(3)} / ${report.before.precision.toFixed(3)}); report ${md}`,
  );
  if (args.report !== false) await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(md));
  return report;
}

async function readWorkspaceFiles(include: string): Promise<WorkspaceFile[]> {
  const uris = await vscode.workspace.findFiles(include, EXCLUDE, MAX_FILES);
  const files: WorkspaceFile[] = [];
  for (const uri of uris.sort((a, b) => a.fsPath.localeCompare(b.fsPath))) {
    const languageId = LANGUAGES[path.extname(uri.fsPath).slice(1).toLowerCase()];
    if (!languageId) continue;
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.size > MAX_FILE_BYTES) continue;
      const bytes = await vscode.workspace.fs.readFile(uri);
      if (bytes.includes(0)) continue; // binary
      files.push({ path: vscode.workspace.asRelativePath(uri), languageId, text: new TextDecoder().decode(bytes) });
    } catch {
      // unreadable: skipped
    }
  }
  return files;
}
