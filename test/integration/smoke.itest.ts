// Smoke tests: the extension loads in a real extension host, activates, and its commands are registered and run.
import * as fs from 'node:fs';
import * as path from 'node:path';
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

test('extension is loaded from the folder under test (this repository, or the installed package) and activates', async () => {
  const ext = extension();
  assert.equal(ext.packageJSON.publisher, 'ghostline');
  assert.equal(ext.packageJSON.name, 'ghostline');
  // This file runs from <repo>/out/test/integration: the development folder is three levels up.
  const repo = path.resolve(__dirname, '..', '..', '..');
  if (process.env.GHOSTLINE_TEST_PACKAGED === '1') {
    assert.notEqual(path.resolve(ext.extensionPath), repo, 'the package under test, not this repository');
    assert.ok(fs.existsSync(path.join(ext.extensionPath, 'dist', 'native.json')), 'an installed package carries dist/native.json');
  } else {
    assert.equal(path.resolve(ext.extensionPath), repo);
  }
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

test('Show Log and Show Stats run', async () => {
  await waitFor(() => extension().isActive, 'activation', 30_000);
  await vscode.commands.executeCommand('ghostline.showLog');
  const summary = await vscode.commands.executeCommand<string>('ghostline.showStats');
  assert.equal(typeof summary, 'string');
  assert.ok(summary.length > 0, 'the stats summary is empty');
});
