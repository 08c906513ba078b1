import type * as vscode from 'vscode';
import type { TextSource } from '../completion/types';

/** A TextDocument as the pipeline's TextSource: reads only the lines it is asked for. */
export function documentSource(doc: vscode.TextDocument): TextSource {
  return { lineCount: doc.lineCount, lineAt: (i) => doc.lineAt(i).text };
}
