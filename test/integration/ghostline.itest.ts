// Ghostline inside a real extension host: inline suggestions on real files, accept, workspace settings,
// Generate from Selection, the status bar, and the error paths (missing model, killed worker).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GhostlineApi } from '../../src/extension';
import {
  acceptAtAny,
  activeApi,
  contributedDefault,
  generateWithSeeds,
  openAt,
  returnPlaces,
  setWorkspace,
  settle,
  triggerAndAccept,
  workspaceFolder,
} from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

let api: GhostlineApi;
let folder: string;

/** GHOSTLINE_TEST_MODEL runs the suite against another model folder (the default: the bundled model). */
const MODEL = process.env.GHOSTLINE_TEST_MODEL;

before(async () => {
  folder = workspaceFolder();
  api = await activeApi();
  if (MODEL) await vscode.workspace.getConfiguration('ghostline').update('modelPath', MODEL, vscode.ConfigurationTarget.Global);
  await waitFor(() => api.loader.info !== null && (!MODEL || api.loader.info.dir === path.resolve(MODEL)), 'the model to load', 60_000);
});

after(async () => {
  for (const key of ['enable', 'inline.topK', 'modelPath', 'engine.threads', 'engine.moveCachedRunsOverMs']) await setWorkspace(key, undefined);
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', MODEL, vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

test('the default model is loaded and the status bar is idle', async () => {
  assert.ok(api.loader.info);
  assert.equal(api.loader.info.name, MODEL ? path.basename(MODEL) : 'ghostline-code-small');
  await waitFor(() => api.status.current === 'idle', 'status idle', 10_000);
});

test('an inline suggestion appears on a Python file and Tab-accept inserts it', async () => {
  const { editor, inserted } = await acceptAtAny(
    [
      ['fib', 'def fibonacci(n):\n    if n <\n', 'if n <'],
      ['fact', 'def factorial(n):\n    if n ==\n', 'if n =='],
      ['count', 'def count_words(text):\n    words =\n', 'words ='],
    ].map(([file, text, cursorAfter]) => ({ file: `${file}.py`, text, cursorAfter })),
  );
  assert.ok(inserted.trim().length > 0, 'only whitespace was accepted');
  assert.match(editor.document.getText(), /^def \w+\((n|text)\):\n {4}(if n <|if n ==|words =)/);
  assert.ok(api.stats.requests > 0);
  assert.equal(api.status.current, 'idle', 'never stuck on generating');
});

test('a TypeScript file gets suggestions too', async () => {
  await acceptAtAny(
    ['add', 'sub', 'mul'].map((name) => ({ file: `${name}.ts`, text: `function ${name}(a: number, b: number) {\n  return\n}\n`, cursorAfter: '  return' })),
  );
});

test('workspace settings apply without a reload: ghostline.enable false stops suggestions', async () => {
  await setWorkspace('enable', false);
  try {
    const editor = await openAt('off.py', 'import os\n\ndef main():\n    print(\n', 'print(');
    // Let requests from the previous test (VS Code asks again after an accept) finish first.
    await settle(api);
    const requests = api.stats.requests;
    const got = await triggerAndAccept(editor, 2);
    assert.equal(got, '');
    assert.equal(api.stats.requests, requests, 'the provider did not ask the model');
  } finally {
    await setWorkspace('enable', undefined);
  }
});

test('an invalid workspace setting is reported once, naming the setting, and the default is used', async () => {
  await setWorkspace('inline.topK', 'lots');
  try {
    await waitFor(() => api.config.problems.some((p) => p.startsWith('ghostline.inline.topK must be a number')), 'the problem report', 5_000);
    const editor = await openAt('bad.py', 'def square(x):\n    return\n', 'return');
    await triggerAndAccept(editor, 2);
    const problems = api.config.problems.filter((p) => p.startsWith('ghostline.inline.topK'));
    assert.equal(problems.length, 1, 'reported once');
    // The setting's contributed default is what the suggestions for this file are made with, and the report says so.
    const fallback = contributedDefault('inline.topK');
    assert.equal(typeof fallback, 'number');
    assert.equal(api.config.completion(editor.document).preset.topK, fallback);
    assert.ok(problems[0].endsWith(`using ${fallback}.`), problems[0]);
    // A valid value is taken, so the check above is not the default by accident.
    await setWorkspace('inline.topK', 3);
    await waitFor(() => api.config.completion(editor.document).preset.topK === 3, 'a valid topK to apply', 5_000);
  } finally {
    await setWorkspace('inline.topK', undefined);
  }
});

test('engine settings from the workspace reach the worker (threads, moved runs), and their removal restores the defaults', async () => {
  const loaded = api.loader.info;
  assert.ok(loaded);
  const threads = loaded.threads === 1 ? 2 : 1;
  await setWorkspace('engine.threads', threads);
  await setWorkspace('engine.moveCachedRunsOverMs', 0);
  try {
    await waitFor(
      () => api.loader.info?.threads === threads && api.loader.info.moveCachedRunsOverMs === 0,
      'the model reloaded with the workspace engine settings',
      60_000,
    );
    await acceptAtAny(returnPlaces('engine'));
  } finally {
    await setWorkspace('engine.threads', undefined);
    await setWorkspace('engine.moveCachedRunsOverMs', undefined);
  }
  const defaultMove = contributedDefault('engine.moveCachedRunsOverMs');
  await waitFor(
    () => api.loader.info?.threads === loaded.threads && api.loader.info.moveCachedRunsOverMs === defaultMove,
    'the default engine settings again',
    60_000,
  );
});

test('Generate from Selection continues the selected code and inserts it after review', async () => {
  const editor = await openAt('gen.py', 'def greet(name):\n    """Say hello."""\n', '"""Say hello."""');
  const start = new vscode.Position(0, 0);
  editor.selection = new vscode.Selection(start, editor.selection.active);
  const before = editor.document.getText();
  const inserted = await generateWithSeeds();
  assert.ok(inserted && inserted.length > 0, 'nothing generated');
  await waitFor(() => editor.document.getText() !== before, 'the insertion', 5_000);
  assert.ok(editor.document.getText().includes(inserted!));
  assert.equal(api.status.current, 'idle');
});

test('Generate from Selection on a method in the middle of a class ends where the method ends', async () => {
  const head =
    'class Account:\n    def __init__(self, owner):\n        self.owner = owner\n        self.balance = 0\n\n    def deposit(self, amount):\n        """Add amount to the balance and return the new balance."""\n';
  const tail = '\n    def withdraw(self, amount):\n        self.balance -= amount\n        return self.balance\n\n\nprint(Account("me").deposit(1))\n';
  const editor = await openAt('account.py', head + tail, '"""Add amount to the balance and return the new balance."""');
  // Signature and docstring, selected as whole lines.
  editor.selection = new vscode.Selection(new vscode.Position(5, 0), new vscode.Position(7, 0));
  const inserted = await generateWithSeeds();
  assert.ok(inserted, 'no seed gave a result');
  const text = editor.document.getText();
  // Inserted at the end of the docstring line, and the code after the method is untouched.
  assert.ok(text.startsWith(head.slice(0, -1) + inserted), `inserted after the docstring: ${JSON.stringify(text)}`);
  assert.ok(text.endsWith(tail), `the code after the method is unchanged: ${JSON.stringify(text)}`);
  // Everything generated is inside the method: each line deeper than its `def`.
  for (const line of inserted.split('\n').filter((l) => l.trim() !== ''))
    assert.ok(/^ {5,}\S/.test(line), `a line outside the method: ${JSON.stringify(line)} in ${JSON.stringify(inserted)}`);
});

test('a killed worker shows an error, and the next request recovers', async () => {
  await api.client.killWorkerForTest();
  await waitFor(() => api.status.current === 'error', 'status error after the crash', 5_000);
  await acceptAtAny(returnPlaces('again'));
  await waitFor(() => api.status.current === 'idle', 'status idle after recovery', 10_000);
});

test('a missing model folder is a clear error, and switching back recovers', async () => {
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', path.join(folder, 'no-such-model'), vscode.ConfigurationTarget.Global);
  await waitFor(() => api.status.current === 'error' && api.loader.info === null, 'status error for the missing model', 20_000);
  const nothing = await vscode.commands.executeCommand<string | null>('ghostline.generateFromSelection', { autoAccept: true });
  assert.equal(nothing, null);
  await vscode.workspace.getConfiguration('ghostline').update('modelPath', MODEL, vscode.ConfigurationTarget.Global);
  await waitFor(() => api.loader.info !== null && api.status.current === 'idle', 'the model again', 60_000);
});
