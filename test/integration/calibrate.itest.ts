// Ghostline: Calibrate for This Workspace in a real extension host: the bundled model completes positions of
// real code written into the workspace (held-out files of the eval set: code it never saw), the gate is
// refitted on them, saved in global storage and used by the model from then on, and the report opens.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { WorkspaceCalibrationReport } from '../../src/completion/calibrate/fitWorkspace';
import type { GhostlineApi } from '../../src/extension';
import { activeApi, workspaceFolder } from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

let api: GhostlineApi;
const FOLDER = 'calibration-sample';

before(async () => {
  api = await activeApi();
  await waitFor(() => api.loader.info !== null, 'the model to load', 60_000);
  // 40 held-out windows of real Python, TypeScript and JavaScript files, one file each.
  const root = path.resolve(__dirname, '..', '..', '..');
  const lines = fs
    .readFileSync(path.join(root, 'tools', 'model', 'eval', 'heldout.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(0, 40);
  const dir = path.join(workspaceFolder(), FOLDER);
  fs.mkdirSync(dir, { recursive: true });
  lines.forEach((line, i) => {
    const ex = JSON.parse(line) as { path: string; prefix: string; suffix: string };
    fs.writeFileSync(path.join(dir, `${i}_${path.basename(ex.path)}`), ex.prefix + ex.suffix);
  });
});

after(async () => {
  api.shared.calibrations.remove(api.loader.modelKey);
  fs.rmSync(path.join(workspaceFolder(), FOLDER), { recursive: true, force: true });
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

test('the command completes positions of the workspace, fits and saves the model a calibration, uses it, and opens the report', async () => {
  const key = api.loader.modelKey;
  assert.equal(api.shared.calibrations.get(key), undefined, 'no calibration before');
  const sourceBefore = api.loader.service?.traits.calibrationSource ?? '';
  const report = await vscode.commands.executeCommand<WorkspaceCalibrationReport | undefined>('ghostline.calibrateWorkspace', {
    include: `${FOLDER}/**`,
    positions: 150,
  });
  assert.ok(report, 'a report');
  assert.equal(report.model, api.loader.info?.name);
  assert.ok(report.positions >= 100 && report.files >= 30, `${report.positions} positions in ${report.files} files`);
  assert.ok(report.suggested >= 40 && report.right > 0, `${report.suggested} suggestions, ${report.right} right`);
  assert.ok(report.own.precision >= 0 && report.own.precision <= 1 && report.curve.own.length === 20);
  // The better fit at the threshold is in use: the workspace's, saved, when it is at least as precise; else the one before, and nothing saved.
  const ownWins = report.own.precision >= report.before.precision - 0.005 && report.own.shown > 0;
  assert.equal(report.inUse, ownWins ? 'own' : 'before', report.why);
  const saved = api.shared.calibrations.get(key);
  if (ownWins) {
    assert.ok(saved && saved.model === report.model);
    assert.match(api.loader.service?.traits.calibrationSource ?? '', /this workspace/);
    assert.notEqual(api.loader.service?.traits.calibrationSource, sourceBefore);
  } else {
    assert.equal(saved, undefined, 'a fit less precise than the one before is not saved');
    assert.equal(api.loader.service?.traits.calibrationSource, sourceBefore);
  }
  // The report: a Markdown preview next to its plot.
  await waitFor(
    () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => /ghostline-calibration-report/.test(t.label)),
    'the report preview to open',
    15_000,
  );
});

test('with too little to fit: nothing is saved and the model keeps its calibration', async () => {
  api.shared.calibrations.remove(api.loader.modelKey);
  const report = await vscode.commands.executeCommand<WorkspaceCalibrationReport | undefined>('ghostline.calibrateWorkspace', {
    include: `${FOLDER}/0_*`,
    positions: 5,
    report: false,
  });
  assert.equal(report, undefined, 'five positions fit nothing');
  assert.equal(api.shared.calibrations.get(api.loader.modelKey), undefined);
  assert.doesNotMatch(api.loader.service?.traits.calibrationSource ?? '', /this workspace/);
});
