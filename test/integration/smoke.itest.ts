// Smoke tests: the extension loads in a real extension host, activates, and its commands are registered;
// the workspace folder the runner opened is usable (open a file, edit, inline-suggest commands run).
import * as path from 'path';
import * as vscode from 'vscode';
import { assert, test, waitFor } from './harness';

const EXTENSION_ID = 'ghostline.ghostline';

function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not loaded`);
  return ext;
}

function contributedCommands(): string[] {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  const cmds = (ext?.packageJSON?.contributes?.commands ?? []) as { command: string }[];
  return cmds.map((c) => c.command);
}

test('extension is loaded from the development folder and activates', async () => {
  const ext = extension();
  assert.equal(ext.packageJSON.publisher, 'ghostline');
  assert.equal(ext.packageJSON.name, 'ghostline');
  // activationEvents: onStartupFinished; activate() ourselves if it has not happened yet, so that a
  // failing activate() surfaces here with its error.
  if (!ext.isActive) await ext.activate();
  await waitFor(() => ext.isActive, `${EXTENSION_ID} to be active`, 30_000);
});

test('every contributed command is registered', async () => {
  await waitFor(() => extension().isActive, 'activation', 30_000);
  const registered = new Set(await vscode.commands.getCommands(true));
  const missing = contributedCommands().filter((c) => !registered.has(c));
  assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
});

// Checked as soon as package.json contributes it (skipped until then).
test('command ghostline.showLog exists', async () => {
  const registered = await vscode.commands.getCommands(true);
  assert.ok(registered.includes('ghostline.showLog'), 'ghostline.showLog is not registered');
  await vscode.commands.executeCommand('ghostline.showLog');
}, { skip: contributedCommands().includes('ghostline.showLog') ? false : 'ghostline.showLog is not contributed yet' });

test('workspace folder is open and a file can be edited', async () => {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder open');
  const uri = vscode.Uri.file(path.join(folder.uri.fsPath, 'sample.py'));
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc);
  assert.equal(doc.languageId, 'python');
  const end = doc.lineAt(doc.lineCount - 1).range.end;
  await editor.edit((b) => b.insert(end, '\n    '));
  editor.selection = new vscode.Selection(doc.lineAt(doc.lineCount - 1).range.end, doc.lineAt(doc.lineCount - 1).range.end);
  // With or without a provider these must run without throwing.
  await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
  await new Promise((r) => setTimeout(r, 200));
  await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
  assert.ok(doc.getText().startsWith('def add(a, b):'), 'unexpected document text');
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
});
