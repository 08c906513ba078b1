import * as vscode from 'vscode';
import { promptReport } from '../completion/context/repo/promptReport';
import type { CompletionService } from '../completion/completionService';
import { promptText } from '../engine/shared/prompt';
import { documentSource } from './documentSource';
import type { EditorRepoContext } from './editorRepoContext';

const SHOW_PROMPT_DEADLINE_MS = 3000;

export interface ShowPromptDeps {
  service: () => CompletionService | null;
  /** The model or server in use and its prompt format, for the report's first line. */
  describe: (service: CompletionService) => { model: string; format: string };
  repo: EditorRepoContext;
  notReadyReason: () => string;
}

/**
 * Ghostline: Show Prompt. Gathers the repository context for the cursor (waiting for each source up to its
 * deadline), then opens what the next suggestion's prompt would be, with where each piece of context came from.
 * Returns the report (tests read it).
 */
export async function showPrompt(d: ShowPromptDeps): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Ghostline: open a file and put the cursor where a suggestion would go, then run Show Prompt.');
    return undefined;
  }
  const service = d.service();
  if (!service) {
    void vscode.window.showWarningMessage(`Ghostline: no prompt to show yet: ${d.notReadyReason()}`);
    return undefined;
  }
  // The user waits for this one: the language servers get longer than a keystroke's background gather.
  await d.repo.refresh(editor, SHOW_PROMPT_DEADLINE_MS, true);
  const doc = editor.document;
  const pos = editor.selection.active;
  const path = vscode.workspace.asRelativePath(doc.uri, false);
  const { prompt, extra } = service.promptFor({
    doc: documentSource(doc),
    cursor: { line: pos.line, character: pos.character },
    languageId: doc.languageId,
    path,
    explicit: false,
    repoName: vscode.workspace.getWorkspaceFolder(doc.uri)?.name,
  });
  const report = promptReport({ path, line: pos.line, character: pos.character, ...d.describe(service), prompt: promptText(prompt), extra });
  const shown = await vscode.workspace.openTextDocument({ content: report, language: 'plaintext' });
  await vscode.window.showTextDocument(shown, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
  return report;
}
