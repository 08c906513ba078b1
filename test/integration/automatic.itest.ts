// The automatic trigger: suggestions VS Code asks for on its own while the user types, with no trigger
// command. They pass the debounce and the confidence gate (ghostline.inline.minConfidence), which the
// explicit trigger (Alt+\, what the other integration tests use) skips.
import * as vscode from 'vscode';
import type { GhostlineApi } from '../../src/extension';
import { activeApi, inserted, openAt, setWorkspace, settle, sleep, triggerAndAccept, typeText } from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

let api: GhostlineApi;

before(async () => {
  api = await activeApi();
  await waitFor(() => api.loader.info !== null, 'the model to load', 60_000);
});

after(async () => {
  await setWorkspace('inline.minConfidence', undefined);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

/** The file both tests type into: a function header, the cursor on the empty line under it. */
const HEADER = 'def fibonacci(n):\n';
const TYPED = '    if n <';

/** Opens `file` and waits until requests from earlier tests (and from opening it) have stopped. */
async function openQuiet(file: string): Promise<vscode.TextEditor> {
  const editor = await openAt(file, `${HEADER}\n`, HEADER);
  // VS Code asks on its own only while the editor has text focus: in a browser just opened, the first test's
  // editor may not have it yet (once, in CI, no request came at all).
  await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
  await settle(api);
  return editor;
}

/** Accepts whatever suggestion is shown, every 500 ms for up to `ms` (no trigger command); returns what was inserted. */
async function acceptWhenShown(editor: vscode.TextEditor, ms: number): Promise<string> {
  const before = editor.document.getText();
  for (const end = Date.now() + ms; Date.now() < end; ) {
    await sleep(500);
    await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
    const now = editor.document.getText();
    if (now !== before) return inserted(before, now);
  }
  return '';
}

test('typing asks the model on its own; with minConfidence 1 the gate holds every suggestion back, and Alt+\\ still shows one', async () => {
  await setWorkspace('inline.minConfidence', 1);
  try {
    const editor = await openQuiet('auto_gated.py');
    const { requests, gated, shown } = api.stats;
    await typeText(TYPED);
    const typed = editor.document.getText();
    assert.equal(typed, `${HEADER}${TYPED}\n`);
    // Only the automatic trigger can be held back: an explicit one always shows.
    await waitFor(() => api.stats.gated > gated, `a suggestion held back by the gate (${api.stats.summary()})`, 30_000);
    await settle(api);
    assert.ok(api.stats.requests > requests);
    assert.equal(api.stats.shown, shown, 'no automatic suggestion was shown');
    assert.ok(api.stats.lastConfidence !== null && api.stats.lastConfidence < 1, `confidence ${api.stats.lastConfidence}`);
    await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
    assert.equal(editor.document.getText(), typed, 'nothing was there to accept');
    // The explicit trigger at the same place skips the gate.
    const got = await triggerAndAccept(editor);
    assert.ok(got.trim().length > 0, `Alt+\\ showed nothing (${api.stats.summary()})`);
    assert.ok(api.stats.shown > shown);
  } finally {
    await setWorkspace('inline.minConfidence', undefined);
  }
});

test('with minConfidence 0 the suggestion VS Code asks for while typing is shown, and Tab-accept inserts it', async () => {
  await setWorkspace('inline.minConfidence', 0);
  try {
    const editor = await openQuiet('auto_shown.py');
    const { requests, gated, shown } = api.stats;
    await typeText(TYPED);
    const got = await acceptWhenShown(editor, 30_000);
    assert.ok(got.trim().length > 0, `no suggestion was shown after typing (${api.stats.summary()})`);
    assert.ok(editor.document.getText().startsWith(`${HEADER}${TYPED}${got}`));
    assert.ok(api.stats.requests > requests);
    assert.ok(api.stats.shown > shown);
    assert.equal(api.stats.gated, gated, 'minConfidence 0 holds nothing back');
  } finally {
    await setWorkspace('inline.minConfidence', undefined);
  }
});
