import * as vscode from 'vscode';
import type { ChunkRing } from '../completion/context/chunkRing';

/** Files larger than this are not read whole for extra context. */
const MAX_CHARS = 2_000_000;

/**
 * Feeds the extra-context ring from what the user does: when they leave a file (switch editors), the code
 * around where they last edited or looked goes in; saving a file does the same. One ring serves every
 * backend (the local model's service and a server's).
 */
export function feedRing(ring: ChunkRing): vscode.Disposable {
  const lastLine = new Map<string, number>();
  let current: vscode.TextDocument | undefined = vscode.window.activeTextEditor?.document;

  const add = (doc: vscode.TextDocument | undefined) => {
    if (!doc || doc.isClosed || (doc.uri.scheme !== 'file' && doc.uri.scheme !== 'untitled' && doc.uri.scheme !== 'vscode-remote')) return;
    const text = doc.getText();
    if (text.length > MAX_CHARS) return;
    const key = doc.uri.toString();
    const lines = text.split(/\r?\n/);
    ring.add(vscode.workspace.asRelativePath(doc.uri, false), lines, lastLine.get(key) ?? 0);
  };

  return vscode.Disposable.from(
    vscode.window.onDidChangeActiveTextEditor((e) => {
      add(current);
      current = e?.document;
    }),
    vscode.workspace.onDidSaveTextDocument((doc) => add(doc)),
    vscode.workspace.onDidChangeTextDocument((e) => {
      const first = e.contentChanges[0];
      if (first) lastLine.set(e.document.uri.toString(), first.range.start.line);
    }),
    vscode.window.onDidChangeTextEditorSelection((e) => lastLine.set(e.textEditor.document.uri.toString(), e.selections[0].active.line)),
    vscode.workspace.onDidCloseTextDocument((doc) => lastLine.delete(doc.uri.toString())),
  );
}
