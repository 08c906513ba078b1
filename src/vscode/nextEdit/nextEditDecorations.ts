import * as vscode from 'vscode';
import type { WindowEdit } from '../../completion/nextEdit/parseAnswer';

/** Inserted text longer than this is cut in the preview (a decoration shows one line). */
const PREVIEW_CHARS = 120;

/**
 * How a proposed edit away from the cursor is shown with the stable API only (a Marketplace extension cannot use
 * the proposed inline-edit API): the text it removes struck through on a red background, the text it writes
 * beside it on a green one, a gutter arrow on its first line and a mark in the overview ruler.
 */
export class NextEditDecorations implements vscode.Disposable {
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly inserted: vscode.TextEditorDecorationType;
  private readonly gutter: vscode.TextEditorDecorationType;

  constructor(gutterIcon: vscode.Uri) {
    this.removed = vscode.window.createTextEditorDecorationType({
      textDecoration: 'line-through',
      backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    });
    this.inserted = vscode.window.createTextEditorDecorationType({});
    this.gutter = vscode.window.createTextEditorDecorationType({
      gutterIconPath: gutterIcon,
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
      isWholeLine: true,
    });
  }

  show(editor: vscode.TextEditor, edits: readonly WindowEdit[]): void {
    const removed: vscode.Range[] = [];
    const inserted: vscode.DecorationOptions[] = [];
    for (const e of edits) {
      const range = new vscode.Range(e.startLine, e.startCharacter, e.endLine, e.endCharacter);
      if (!range.isEmpty) removed.push(range);
      if (e.newText) {
        inserted.push({
          range: new vscode.Range(range.end, range.end),
          renderOptions: {
            after: {
              contentText: preview(e.newText),
              backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
              color: new vscode.ThemeColor('editor.foreground'),
              margin: '0 0 0 0.5ch',
            },
          },
        });
      }
    }
    editor.setDecorations(this.removed, removed);
    editor.setDecorations(this.inserted, inserted);
    const first = edits[0];
    editor.setDecorations(this.gutter, first ? [new vscode.Range(first.startLine, 0, first.startLine, 0)] : []);
  }

  clear(editor: vscode.TextEditor | undefined): void {
    if (!editor) return;
    for (const t of [this.removed, this.inserted, this.gutter]) editor.setDecorations(t, []);
  }

  dispose(): void {
    this.removed.dispose();
    this.inserted.dispose();
    this.gutter.dispose();
  }
}

/** One line of the inserted text: line breaks as "⏎", long text cut with "…". */
function preview(text: string): string {
  const one = text.replace(/\r?\n/g, ' ⏎ ');
  return one.length > PREVIEW_CHARS ? `${one.slice(0, PREVIEW_CHARS - 1)}…` : one;
}
