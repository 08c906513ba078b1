import * as vscode from 'vscode';
import { createRepoContext } from '../completion/context/repo/createRepoContext';
import { MemoryFiles } from '../completion/context/repo/memoryFiles';
import { SourceParser } from '../completion/context/repo/parseSource';
import type { GatherAt, GatherStats, RepoContext } from '../completion/context/repo/repoContext';
import type { Candidate } from '../completion/context/repo/similarSnippets';
import type { ContextSnippet, ContextSource } from '../completion/context/repo/snippet';
import type { SourceFiles } from '../completion/context/repo/sourceFiles';
import { WorkspaceFiles } from '../platform/workspaceFiles';
import type { Config } from './config';
import { definitionsProvider, relativeTo } from './definitionsProvider';

/** An open document larger than this is not searched for similar code. */
const MAX_OPEN_CHARS = 300_000;
/** After an edit, the gather waits this long for the typing to pause (cursor moves and editor switches go at once). */
const EDIT_SETTLE_MS = 150;

/**
 * Repository context in the editor: one RepoContext per workspace folder (imports and similar code from its
 * files on disk, definitions from the language servers), gathered on editor switches, cursor moves and edits,
 * never while a prompt is being built. Prompts read what is there (`snippets`).
 */
export class EditorRepoContext implements vscode.Disposable {
  private readonly folders = new Map<string, RepoContext>();
  private readonly parser = new SourceParser();
  private readonly subscriptions: vscode.Disposable[] = [];
  private editTimer: NodeJS.Timeout | undefined;
  /** Files changed or deleted on disk (creations cannot have been read). */
  private readonly watcher = vscode.workspace.createFileSystemWatcher('**/*', true, false, false);
  /** The document and line of the last cursor move that gathered. */
  private lastLine = '';

  constructor(
    private readonly config: Config,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((e) => e && void this.refresh(e)),
      // Typing moves the cursor at every key: only a move to another line gathers at once (edits settle first).
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor !== vscode.window.activeTextEditor) return;
        const at = `${e.textEditor.document.uri.toString()}:${e.selections[0]?.active.line}`;
        if (at === this.lastLine) return;
        this.lastLine = at;
        void this.refresh(e.textEditor);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        const editor = vscode.window.activeTextEditor;
        if (!editor || e.document !== editor.document || e.contentChanges.length === 0) return;
        clearTimeout(this.editTimer);
        this.editTimer = setTimeout(() => void this.refresh(editor), EDIT_SETTLE_MS);
      }),
      // What was read from a file that changed is read again (an edited signature must not stay in the context as
      // it was): saved here, or changed on disk by anything else (a git checkout). The workspace's own watcher
      // serves a workspace-relative glob, so this adds no watching of its own.
      vscode.workspace.onDidSaveTextDocument((doc) => this.fileChanged(doc.uri)),
      this.watcher,
      this.watcher.onDidChange((uri) => this.fileChanged(uri)),
      this.watcher.onDidDelete((uri) => this.fileChanged(uri)),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.folders.clear()),
    );
    if (vscode.window.activeTextEditor) void this.refresh(vscode.window.activeTextEditor);
  }

  private fileChanged(uri: vscode.Uri): void {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (folder) this.folders.get(folder.uri.toString())?.changed(relativeTo(folder, uri));
  }

  /** The snippets gathered for `path` in the active editor's folder (never waits). */
  snippets(path: string): ContextSnippet[] {
    const doc = vscode.window.activeTextEditor?.document;
    const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
    return folder ? (this.folders.get(folder.uri.toString())?.snippets(path) ?? []) : [];
  }

  /** Gathers for the editor's cursor now; resolves when every source has answered or hit its deadline (Show Prompt). */
  refresh(editor: vscode.TextEditor, deadlineMs?: number, force = false): Promise<void> {
    const doc = editor.document;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    if (!folder) return Promise.resolve();
    // Every source's key reads the text: one copy per event, and none for a source that does not need it.
    let text: string | undefined;
    const at: GatherAt = {
      path: relativeTo(folder, doc.uri),
      languageId: doc.languageId,
      length: doc.offsetAt(doc.lineAt(doc.lineCount - 1).range.end),
      text: () => {
        text ??= doc.getText();
        return text;
      },
      line: editor.selection.active.line,
    };
    return this.contextOf(folder).refresh(at, deadlineMs, force);
  }

  /** Gather timings across folders (Show Stats). */
  stats(): GatherStats {
    const all: GatherStats = { gathers: 0, failures: 0, timeouts: 0, durationsMs: [] };
    for (const c of this.folders.values()) {
      all.gathers += c.stats.gathers;
      all.failures += c.stats.failures;
      all.timeouts += c.stats.timeouts;
      all.durationsMs.push(...c.stats.durationsMs);
    }
    return all;
  }

  private contextOf(folder: vscode.WorkspaceFolder): RepoContext {
    const key = folder.uri.toString();
    let context = this.folders.get(key);
    if (!context) {
      // Files on another file system (a virtual workspace) are reached only through the language servers.
      const files: SourceFiles = folder.uri.scheme === 'file' ? new WorkspaceFiles(folder.uri.fsPath) : new MemoryFiles({});
      const enabled = (source: ContextSource) => this.config.completion(vscode.window.activeTextEditor?.document).context.sources[source];
      context = createRepoContext({
        files,
        enabled,
        open: () => openDocuments(folder),
        more: [definitionsProvider(folder, files, this.parser)],
        log: (line) => this.log.warn(line),
      }).context;
      this.folders.set(key, context);
    }
    return context;
  }

  dispose(): void {
    clearTimeout(this.editTimer);
    for (const s of this.subscriptions) s.dispose();
    this.folders.clear();
  }
}

/** Open documents of the folder, with their unsaved text: searched first for similar code. */
function openDocuments(folder: vscode.WorkspaceFolder): Candidate[] {
  const out: Candidate[] = [];
  for (const d of vscode.workspace.textDocuments) {
    if (d.isClosed || vscode.workspace.getWorkspaceFolder(d.uri)?.uri.toString() !== folder.uri.toString()) continue;
    const text = d.getText();
    if (text.length <= MAX_OPEN_CHARS) out.push({ path: relativeTo(folder, d.uri), text });
  }
  return out;
}
