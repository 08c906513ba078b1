// Next edit in a real editor, with a scripted generator in place of a next-edit model (none is small enough to
// ship): after the user's edit the controller asks on its own, the proposed edit is shown away from the cursor,
// Tab (the command its keybinding runs) jumps to it, Tab again applies it, the file on disk is right, and Esc
// dismisses the next one. The generator reads the window from the real prompt and answers as a model would.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Generator } from '../../src/completion/generator';
import { cancelledResult } from '../../src/engine/shared/cancelledResult';
import { promptText } from '../../src/engine/shared/prompt';
import type { GhostlineApi } from '../../src/extension';
import { EXTENSION_ID, activeApi, openAt, sleep } from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

let api: GhostlineApi;

/** A model that rewrites the window it is shown with `rewrite`, and records the prompts it got. */
function scripted(rewrite: (window: string) => string, prompts: string[]): Generator {
  return {
    async generate(prompt) {
      const text = promptText(prompt);
      prompts.push(text);
      const m = /<\|file_sep\|>current\/[^\n]*\n([\s\S]*?)\n<\|file_sep\|>updated\//.exec(text);
      const result = cancelledResult();
      return { ...result, text: `${rewrite(m ? m[1] : '')}\n<|file_sep|>`, finishReason: 'stop' };
    },
  };
}

const FILE = ['def area(width, height):', '    """The area of a rectangle."""', '    return width * height', '', '', 'print(area(3, 4))', ''].join('\n');

before(async () => {
  api = await activeApi();
});

after(async () => {
  api.nextEdit.useGenerator(null);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

test('next edit: after a rename the matching edit two lines down is shown; Tab jumps, Tab applies, the file is saved right; Esc dismisses', async () => {
  const prompts: string[] = [];
  api.nextEdit.useGenerator(scripted((w) => w.replace('width * height', 'width * depth'), prompts));
  const editor = await openAt('next_edit_area.py', FILE, 'def area(width, ');
  // The user renames the parameter (as typing would: one change at the cursor).
  await editor.edit((b) => b.replace(new vscode.Range(0, 16, 0, 22), 'depth'));
  await waitFor(() => api.nextEdit.current.length > 0, `a next edit shown (${api.nextEdit.stats.summary()})`, 20_000);
  assert.deepEqual(
    api.nextEdit.current.map((e) => e.startLine),
    [2],
    `one edit, on the return line: ${JSON.stringify(api.nextEdit.current)}`,
  );
  // The prompt is Sweep's layout, with the user's edit as an original/updated block.
  const prompt = prompts.at(-1) ?? '';
  assert.match(prompt, /<\|file_sep\|>next_edit_area\.py\.diff\noriginal:\n[\s\S]*def area\(width, height\):[\s\S]*updated:\n[\s\S]*def area\(width, depth\):/);
  assert.match(prompt, /<\|file_sep\|>original\/next_edit_area\.py\ndef area\(width, height\):/);
  assert.ok(prompt.endsWith('<|file_sep|>updated/next_edit_area.py\n'));

  // Tab on line 0: jump; Tab on the edit's line: apply.
  assert.equal(editor.selection.active.line, 0);
  assert.equal(await vscode.commands.executeCommand('ghostline.nextEdit.accept'), 'jumped');
  assert.equal(editor.selection.active.line, 2);
  assert.equal(await vscode.commands.executeCommand('ghostline.nextEdit.accept'), 'applied');
  assert.equal(editor.document.lineAt(2).text, '    return width * depth');
  assert.equal(editor.document.lineAt(0).text, 'def area(width, depth):');
  assert.equal(editor.document.getText(), FILE.replace('width, height', 'width, depth').replace('width * height', 'width * depth'));
  await editor.document.save();
  const onDisk = fs.readFileSync(editor.document.uri.fsPath, 'utf8');
  assert.equal(onDisk, FILE.replace('width, height', 'width, depth').replace('width * height', 'width * depth'));

  // The applied edit asks for the next one: this model proposes a docstring change; Esc dismisses it.
  api.nextEdit.useGenerator(scripted((w) => w.replace('The area of a rectangle.', 'The area of a width x depth rectangle.'), prompts));
  await editor.edit((b) => b.insert(new vscode.Position(5, 0), '# usage\n'));
  await waitFor(() => api.nextEdit.current.length > 0, `a second next edit (${api.nextEdit.stats.summary()})`, 20_000);
  assert.equal(api.nextEdit.current[0].startLine, 1);
  await vscode.commands.executeCommand('ghostline.nextEdit.dismiss');
  assert.equal(api.nextEdit.current.length, 0);
  assert.ok(!editor.document.getText().includes('width x depth'), 'dismissed, not applied');
  assert.ok(api.nextEdit.stats.dismissed >= 1 && api.nextEdit.stats.applied >= 1);
});

test('next edit: an answer that rewrites the whole window (another window) is dropped, nothing is shown', async () => {
  api.nextEdit.useGenerator(scripted(() => 'import os\nimport sys\n\nclass Unrelated:\n    pass', []));
  const editor = await openAt('next_edit_other.py', FILE, 'def area(width, ');
  const before = api.nextEdit.stats.dropped.get('tooLarge') ?? 0;
  await editor.edit((b) => b.replace(new vscode.Range(0, 16, 0, 22), 'depth'));
  await waitFor(() => (api.nextEdit.stats.dropped.get('tooLarge') ?? 0) > before, `the answer dropped (${api.nextEdit.stats.summary()})`, 20_000);
  assert.equal(api.nextEdit.current.length, 0);
});

test('next edit: an insertion right at the cursor is ghost text; VS Code accepts it as any suggestion', async () => {
  const text = 'def area(width, depth):\n    """The area."""\n    return width * depth\n';
  api.nextEdit.useGenerator(scripted((w) => w.replace('    return', '    assert depth > 0\n    return'), []));
  const editor = await openAt('next_edit_ghost.py', text, '"""The area."""\n');
  const applied = api.nextEdit.stats.applied;
  await editor.edit((b) => b.insert(new vscode.Position(2, 0), '    assert width > 0\n'));
  const at = new vscode.Position(3, 0);
  editor.selection = new vscode.Selection(at, at);
  await waitFor(() => api.nextEdit.ghostTextAt(editor.document, at) !== null, `ghost text at the cursor (${api.nextEdit.stats.summary()})`, 20_000);
  assert.equal(api.nextEdit.current.length, 1);
  // Shown as ghost text, so no next-edit key is bound: VS Code's own accept (Tab) inserts it.
  const before = editor.document.getText();
  for (let i = 0; i < 20 && editor.document.getText() === before; i++) {
    await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    await new Promise((r) => setTimeout(r, 250));
    await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
  }
  assert.equal(editor.document.getText(), text.replace('    return', '    assert width > 0\n    assert depth > 0\n    return'));
  assert.equal(api.nextEdit.stats.applied, applied + 1, 'the acceptance is counted');
});

test('next edit: Tab and Esc are bound only while a next edit is shown, and never over an inline suggestion', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '', 'package.json'), 'utf8'));
  const bindings = (pkg.contributes.keybindings as { command: string; key: string; when: string }[]).filter((k) => k.command.startsWith('ghostline.nextEdit.'));
  const tab = bindings.find((k) => k.key === 'tab');
  const esc = bindings.find((k) => k.key === 'escape');
  assert.ok(tab && esc);
  for (const k of [tab, esc]) {
    assert.match(k.when, /ghostline\.nextEditShown/);
    assert.match(k.when, /!inlineSuggestionVisible/);
  }
});

test('next edit: the history keeps a file’s edits across a save and through typing in a clean file, and drops them when the file is reverted', async () => {
  // A generator that proposes nothing: only the history is looked at here.
  api.nextEdit.useGenerator(scripted((w) => w, []));
  const file = 'next_edit_revert.py';
  const editor = await openAt(file, FILE, 'def area(width, ');
  const history = api.nextEdit.history;
  const edited = () => history.latestEdit(file) !== undefined;
  await editor.edit((b) => b.replace(new vscode.Range(0, 16, 0, 22), 'depth'));
  await waitFor(edited, 'the rename is in the history', 5_000);
  assert.ok(await editor.document.save());
  const saved = editor.document.getText();
  await sleep(500); // the dirty flag's own change event comes after the save
  assert.ok(edited(), 'a save keeps the history');
  // Typing into the clean, saved file: an edit like any other.
  await editor.edit((b) => b.insert(new vscode.Position(2, 0), '    # checked\n'));
  await waitFor(() => history.latestEdit(file)?.insertedText === '    # checked\n', 'the edit after the save is recorded', 5_000);
  await vscode.commands.executeCommand('workbench.action.files.revert');
  await waitFor(() => !editor.document.isDirty && !edited(), `the reverted file's edits are dropped (${JSON.stringify(history.latestEdit(file))})`, 10_000);
  assert.equal(editor.document.getText(), saved, 'reverted to the saved text');
});
