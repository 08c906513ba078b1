import * as vscode from 'vscode';
import type { Generator } from '../completion/generator';
import { toEol } from '../completion/lineEndings';
import type { Config } from './config';
import type { StatusBar } from './statusBar';

/** Characters of the file before the selection end given as the prompt; the engine keeps the end if too long. */
const PROMPT_CHARS = 12000;

export interface GenerateArgs {
  /** Insert without asking (integration tests, keybindings that want it). */
  autoAccept?: boolean;
}

/**
 * "Ghostline: Generate from Selection": the selected code (or the current line) and the file before it form
 * the prompt; a longer continuation (the generate preset) streams into a progress notification that can be
 * cancelled, is shown beside the editor for review, and is inserted after the selection only on request.
 * Returns the inserted text (or null), for tests.
 */
export async function generateFromSelection(
  deps: {
    /** The local engine or the team server (null: none is ready). */
    generator: () => Generator | null;
    notReadyReason: () => string;
    config: Config;
    status: StatusBar;
    log: vscode.LogOutputChannel;
  },
  args: GenerateArgs = {},
): Promise<string | null> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Ghostline: open a file and select some code first.');
    return null;
  }
  const generator = deps.generator();
  if (!generator) {
    void vscode.window.showWarningMessage(`Ghostline: ${deps.notReadyReason()}.`);
    return null;
  }
  const doc = editor.document;
  const sel = editor.selection;
  const end = sel.isEmpty ? doc.lineAt(sel.active.line).range.end : sel.end;
  const startOffset = Math.max(0, doc.offsetAt(end) - PROMPT_CHARS);
  const prompt = doc.getText(new vscode.Range(doc.positionAt(startOffset), end));
  if (prompt.trim() === '') {
    void vscode.window.showInformationMessage('Ghostline: there is no code before the cursor to continue.');
    return null;
  }
  const p = deps.config.generate(doc);
  const versionAtStart = doc.version;

  const done = deps.status.begin();
  let text = '';
  let reason = '';
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ghostline: generating', cancellable: true },
      async (progress, token) => {
        const ac = new AbortController();
        const sub = token.onCancellationRequested(() => ac.abort());
        try {
          // The document's text is literal: `<|endoftext|>` in a file stays text.
          const r = await generator.generate(
            [{ text: prompt }],
            { ...p },
            {
              signal: ac.signal,
              onText: (d) => {
                text += d;
                progress.report({ message: `${text.split('\n').length} lines` });
              },
            },
          );
          text = r.text;
          reason = r.finishReason;
          deps.log.info(`generate: ${r.stats.generatedTokens} tokens in ${Math.round(r.stats.totalMs)} ms (${r.finishReason})`);
        } finally {
          sub.dispose();
        }
      },
    );
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    deps.log.error(`generate failed: ${msg}`);
    void vscode.window.showErrorMessage(`Ghostline: generation failed: ${msg}`);
    return null;
  } finally {
    done();
  }
  if (reason === 'cancelled') {
    void vscode.window.showInformationMessage('Ghostline: generation cancelled.');
    return null;
  }
  if (text.trim() === '') {
    void vscode.window.showInformationMessage('Ghostline: the model had nothing to add here.');
    return null;
  }

  const preview = await vscode.workspace.openTextDocument({ content: text, language: doc.languageId });
  await vscode.window.showTextDocument(preview, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
  const choice = args.autoAccept
    ? 'Insert'
    : await vscode.window.showInformationMessage('Ghostline: insert the generated code after the selection?', 'Insert', 'Copy', 'Discard');
  if (choice === 'Copy') await vscode.env.clipboard.writeText(text);
  if (choice !== 'Insert') return null;
  if (doc.version !== versionAtStart) deps.log.warn('the document changed while generating; inserting at the original position');
  const edit = new vscode.WorkspaceEdit();
  edit.insert(doc.uri, end, toEol(text, doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n')); // lineEndings.ts
  return (await vscode.workspace.applyEdit(edit)) ? text : null;
}
