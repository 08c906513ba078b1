import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { EditHistory } from '../../completion/nextEdit/editHistory';

/** Documents larger than this are not followed: their edits would not fit a prompt's history anyway. */
const MAX_CHARS = 2_000_000;

/** The document's path as the prompt writes it: workspace-relative, "/" on every platform. */
export function promptPathOf(doc: vscode.TextDocument): string {
  return vscode.workspace.asRelativePath(doc.uri, false).replace(/\\/g, '/');
}

/** Files the user edits (local, unsaved, remote, virtual workspaces); not output panels, diffs or settings. */
const FOLLOWED_SCHEMES = new Set(['file', 'untitled', 'vscode-remote', 'vscode-vfs']);

function followed(doc: vscode.TextDocument): boolean {
  return FOLLOWED_SCHEMES.has(doc.uri.scheme);
}

/** A digest of a document's text as it is on disk: compared only when a document turns clean (rare). */
function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}

/**
 * Feeds the edit history from the editor's change events, while next edit is on (`active`): off, a keystroke
 * costs nothing here. VS Code says where a change was and what was inserted, not what it removed: the text of
 * each open document (up to MAX_CHARS) is kept from before its next change, so the first edit of a file is known
 * too. A closed document is forgotten, and so is its text. So is a reverted one: VS Code has no revert event, but
 * a document that turns clean (the change event with no content changes that carries the dirty flag) while its
 * text is the text last opened or saved was reverted, or undone back to it; a save turns it clean with new text.
 */
export function feedEditHistory(history: EditHistory, active: () => boolean): vscode.Disposable {
  const before = new Map<string, string>();
  /** Digest of the text as on disk (at open when clean, at each save), and whether the document was dirty. */
  const onDisk = new Map<string, string>();
  const wasDirty = new Map<string, boolean>();
  /** Saved since the last content change: its turning clean is the save's, whichever event comes first. */
  const justSaved = new Set<string>();
  const remember = (doc: vscode.TextDocument) => {
    if (!active() || !followed(doc)) return;
    const text = doc.getText();
    if (text.length > MAX_CHARS) return;
    const key = doc.uri.toString();
    before.set(key, text);
    wasDirty.set(key, doc.isDirty);
    if (!doc.isDirty) onDisk.set(key, digest(text));
  };
  const turnedClean = (doc: vscode.TextDocument) => {
    const key = doc.uri.toString();
    const dirtyBefore = wasDirty.get(key);
    wasDirty.set(key, doc.isDirty);
    if (!dirtyBefore || doc.isDirty || !onDisk.has(key) || justSaved.has(key)) return;
    if (digest(doc.getText()) === onDisk.get(key)) history.forget(promptPathOf(doc));
  };
  // From the moment a document opens: an edit right after it is shown (before its editor is visible) is known too.
  for (const doc of vscode.workspace.textDocuments) remember(doc);
  return vscode.Disposable.from(
    vscode.workspace.onDidOpenTextDocument((doc) => remember(doc)),
    vscode.workspace.onDidSaveTextDocument((doc) => {
      if (!active() || !before.has(doc.uri.toString())) return;
      onDisk.set(doc.uri.toString(), digest(doc.getText()));
      justSaved.add(doc.uri.toString());
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (!followed(e.document)) return;
      if (!active()) {
        before.clear();
        onDisk.clear();
        wasDirty.clear();
        justSaved.clear();
        return;
      }
      if (e.contentChanges.length === 0) {
        turnedClean(e.document);
        return;
      }
      const key = e.document.uri.toString();
      justSaved.delete(key);
      if (e.document.isDirty) wasDirty.set(key, true);
      const text = e.document.getText();
      const old = before.get(key);
      if (text.length > MAX_CHARS) {
        before.delete(key);
        history.forget(promptPathOf(e.document));
        return;
      }
      before.set(key, text);
      const path = promptPathOf(e.document);
      const atMs = Date.now();
      // Offsets of one event refer to the text before it: recorded from the last to the first, each stays valid.
      const changes = [...e.contentChanges].sort((a, b) => b.rangeOffset - a.rangeOffset);
      changes.forEach((c, i) => {
        history.record({
          path,
          offset: c.rangeOffset,
          removedLength: c.rangeLength,
          insertedText: c.text,
          atMs,
          removedText: old?.slice(c.rangeOffset, c.rangeOffset + c.rangeLength),
          documentTextAfter: i === changes.length - 1 ? text : undefined,
        });
      });
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      before.delete(doc.uri.toString());
      onDisk.delete(doc.uri.toString());
      wasDirty.delete(doc.uri.toString());
      justSaved.delete(doc.uri.toString());
      history.forget(promptPathOf(doc));
    }),
  );
}
