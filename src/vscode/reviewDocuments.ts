import * as vscode from 'vscode';

export const REVIEW_SCHEME = 'ghostline-review';

/**
 * The review's virtual documents (read-only, never saved): the file as it is and the file with the result
 * inserted, shown side by side by `vscode.diff` at the place the result will go. The generated side is
 * updated as the model streams, so the review fills while it is being written.
 */
export class ReviewDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  set(uri: vscode.Uri, text: string): void {
    if (this.texts.get(uri.toString()) === text) return;
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  forget(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
    this.texts.clear();
  }
}
