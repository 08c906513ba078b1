// Helpers the integration tests share: the extension's API, files opened at a cursor, suggestions triggered
// and accepted, typing, settings. Not a test module itself: index.ts loads only `*.itest.js` files.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GhostlineApi } from '../../src/extension';
import { assert } from './harness';

export const EXTENSION_ID = 'ghostline.ghostline';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The extension's API, activating it first when it has not been yet. */
export async function activeApi(): Promise<GhostlineApi> {
  const ext = vscode.extensions.getExtension<GhostlineApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not loaded`);
  return ext.isActive ? ext.exports : await ext.activate();
}

/** The folder the run opened: a fresh copy of test/integration/workspace/. */
export function workspaceFolder(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open');
  return folder.uri.fsPath;
}

/** Writes `text` to `file` in the workspace folder, opens it, and puts the cursor after the first `cursorAfter`. */
export async function openAt(file: string, text: string, cursorAfter: string): Promise<vscode.TextEditor> {
  const p = path.join(workspaceFolder(), file);
  fs.writeFileSync(p, text);
  const doc = await vscode.workspace.openTextDocument(p);
  const editor = await vscode.window.showTextDocument(doc);
  const at = text.indexOf(cursorAfter);
  assert.ok(at >= 0, `${JSON.stringify(cursorAfter)} is not in ${file}`);
  const pos = doc.positionAt(at + cursorAfter.length);
  editor.selection = new vscode.Selection(pos, pos);
  return editor;
}

/**
 * Triggers suggestions explicitly (editor.action.inlineSuggest.trigger, as Alt+\ does, so the confidence gate
 * lets them through) and accepts the first; returns what was inserted ('' if none came). Each try waits a
 * little longer, and a request still running then (a busy machine, a worker restarting) is waited for, however
 * long it takes: the result does not depend on the machine's speed.
 */
export async function triggerAndAccept(editor: vscode.TextEditor, tries = 6): Promise<string> {
  const api = await activeApi();
  const before = editor.document.getText();
  for (let i = 0; i < tries; i++) {
    await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    await sleep(500 + i * 400);
    const end = Date.now() + RUNNING_REQUEST_TIMEOUT_MS;
    if (api.status.busy) {
      while (api.status.busy && Date.now() < end) await sleep(50);
      await sleep(200); // the editor renders the answer after the provider returns it
    }
    await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
    const after = editor.document.getText();
    if (after !== before) return after.length > before.length ? inserted(before, after) : after;
  }
  return '';
}

/** A small file to open, and where the cursor goes in it (after the first `cursorAfter`). */
export interface Place {
  file: string;
  text: string;
  cursorAfter: string;
}

/** Three one-line Python functions with the cursor after `return` (files named `<prefix>_<function>.py`). */
export function returnPlaces(prefix: string, eol = '\n'): Place[] {
  return ['square', 'cube', 'halve'].map((name) => ({ file: `${prefix}_${name}.py`, text: `def ${name}(x):${eol}    return${eol}`, cursorAfter: 'return' }));
}

/**
 * triggerAndAccept at each place in turn until one suggestion is accepted. Which answer the small model gives,
 * and whether the filters keep it, depends on the prompt, and the prompt on what earlier tests left in the
 * recent-chunk ring and the workspace (a suggestion accepted whole or as a partial line on a slower machine).
 * A test about something else than that answer (a restarted worker, line endings) asks at several places: one
 * place's nothing is cached, so asking there again cannot help. On failure the message says what the requests got.
 */
export async function acceptAtAny(places: Place[]): Promise<{ editor: vscode.TextEditor; inserted: string }> {
  const api = await activeApi();
  const before = { ...api.stats.bySource, gated: api.stats.gated, shown: api.stats.shown };
  for (const place of places) {
    const editor = await openAt(place.file, place.text, place.cursorAfter);
    const got = await triggerAndAccept(editor, 3);
    if (got.length > 0) return { editor, inserted: got };
  }
  const now = { ...api.stats.bySource, gated: api.stats.gated, shown: api.stats.shown };
  const delta = Object.entries(now)
    .map(([k, v]) => `${k} +${v - (before[k as keyof typeof before] ?? 0)}`)
    .join(', ');
  throw new assert.AssertionError({ message: `no suggestion accepted at any of ${places.map((p) => p.file).join(', ')} (requests: ${delta})` });
}

/** How long a running request is waited for at most (a model loading on a busy 2-core machine). */
const RUNNING_REQUEST_TIMEOUT_MS = 45_000;

/** The text `after` has that `before` has not, where the two first differ (an insertion). */
export function inserted(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  return after.slice(i, i + after.length - before.length);
}

/** Types into the focused editor as the keyboard does (the `type` command): VS Code triggers suggestions on its own. */
export async function typeText(text: string): Promise<void> {
  await vscode.commands.executeCommand('type', { text });
}

/**
 * Runs Generate from Selection (auto-accepted) with seeds 0, 1, ... until one gives a result: the small model's
 * results are often dropped by the post-processing (it rarely closes a body), wherever it is served.
 */
export async function generateWithSeeds(tries = 6): Promise<string | null> {
  for (let seed = 0; seed < tries; seed++) {
    const result = await vscode.commands.executeCommand<string | null>('ghostline.generateFromSelection', { autoAccept: true, seed });
    if (result) return result;
  }
  return null;
}

/** Waits until no completion request has been recorded for 1.5 s. */
export async function settle(api: GhostlineApi): Promise<void> {
  let last = -1;
  while (last !== api.stats.requests) {
    last = api.stats.requests;
    await sleep(1500);
  }
}

/** Sets a ghostline.* setting in the workspace (undefined removes it). */
export async function setWorkspace(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('ghostline').update(key, value, vscode.ConfigurationTarget.Workspace);
}

/** The default of a ghostline.* setting, as the extension's package.json contributes it. */
export function contributedDefault(key: string): unknown {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext);
  const properties = ext.packageJSON.contributes.configuration.properties as Record<string, { default?: unknown }>;
  assert.ok(`ghostline.${key}` in properties, `ghostline.${key} is not contributed`);
  return properties[`ghostline.${key}`].default;
}
