import * as vscode from 'vscode';
import type { Generator } from '../../completion/generator';
import type { EditHistory } from '../../completion/nextEdit/editHistory';
import { ghostTextAt } from '../../completion/nextEdit/ghostTextEdit';
import type { WindowEdit } from '../../completion/nextEdit/parseAnswer';
import { parsesNoWorseWith } from '../../completion/nextEdit/parsesNoWorse';
import { type NextEditOutcome, predictNextEdit } from '../../completion/nextEdit/predictNextEdit';
import type { SyntaxRefiner } from '../../completion/syntax/syntaxRefiner';
import { errorMessage } from '../../engine/shared/errors';
import type { Config } from '../config';
import { promptPathOf } from './historyFeeder';
import type { NextEditDecorations } from './nextEditDecorations';

/** The pause after an edit before a next edit is asked for: typing on cancels it, so bursts cost nothing. */
const DEBOUNCE_MS = 300;
/** The context key the Tab and Esc keybindings read. */
const SHOWN_KEY = 'ghostline.nextEditShown';

interface Shown {
  editor: vscode.TextEditor;
  version: number;
  edits: WindowEdit[];
}

/** What happened to next edits this session, for Show Stats. */
class NextEditStats {
  requested = 0;
  shown = 0;
  jumped = 0;
  applied = 0;
  dismissed = 0;
  stale = 0;
  readonly dropped = new Map<string, number>();
  lastMs: number | null = null;

  summary(): string {
    const drops = [...this.dropped].map(([r, n]) => `${r} ${n}`).join(', ');
    return (
      `next edits: ${this.requested} asked, ${this.shown} shown, ${this.jumped} jumped to, ${this.applied} applied, ${this.dismissed} dismissed` +
      `${drops ? `; dropped: ${drops}` : ''}${this.stale ? `; ${this.stale} outdated by typing` : ''}${this.lastMs !== null ? `; last took ${this.lastMs} ms` : ''}`
    );
  }
}

/**
 * After an edit, asks for the edit that follows it and shows it; Tab jumps to it, Tab again applies it, Esc
 * dismisses it. One request at a time: a new edit cancels the one in flight, and an answer for a document that
 * changed meanwhile is dropped (it was computed for text that is gone).
 */
export class NextEditController implements vscode.Disposable {
  readonly stats = new NextEditStats();
  private shown: Shown | null = null;
  private inFlight: AbortController | null = null;
  private timer: NodeJS.Timeout | undefined;
  private override: Generator | null = null;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly deps: {
      config: Config;
      history: EditHistory;
      decorations: NextEditDecorations;
      generator: () => Promise<Generator | null>;
      syntax: SyntaxRefiner;
      log: vscode.LogOutputChannel;
    },
  ) {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length === 0 || e.document !== vscode.window.activeTextEditor?.document) return;
        this.clear();
        this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.clear()),
      vscode.commands.registerCommand('ghostline.nextEdit.accept', () => this.accept()),
      vscode.commands.registerCommand('ghostline.nextEdit.dismiss', () => this.dismiss()),
      vscode.commands.registerCommand('ghostline.nextEdit.acceptedAsGhostText', () => this.stats.applied++),
      // An insertion right at the cursor is shown as ghost text: VS Code's own Tab then accepts it.
      vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, { provideInlineCompletionItems: (doc, pos) => this.ghostText(doc, pos) }),
    ];
  }

  /** A generator that replaces the next-edit model (integration tests, other extensions); null restores it. */
  useGenerator(generator: Generator | null): void {
    this.override = generator;
  }

  /** The shown next edit as ghost text at `pos`, when it is an insertion right there (ghostTextEdit.ts). */
  ghostTextAt(doc: vscode.TextDocument, pos: vscode.Position): string | null {
    const s = this.shown;
    if (!s || s.editor.document !== doc || doc.version !== s.version) return null;
    return ghostTextAt(s.edits, pos.line, pos.character);
  }

  private ghostText(doc: vscode.TextDocument, pos: vscode.Position): vscode.InlineCompletionItem[] | undefined {
    const text = this.ghostTextAt(doc, pos);
    if (text === null) return undefined;
    return [
      new vscode.InlineCompletionItem(text, new vscode.Range(pos, pos), {
        title: 'Ghostline: next edit accepted',
        command: 'ghostline.nextEdit.acceptedAsGhostText',
      }),
    ];
  }

  /** The edits shown now, for tests and the status bar. */
  get current(): readonly WindowEdit[] {
    return this.shown?.edits ?? [];
  }

  /** The user's recent edits the prompts are built from (tests and stats read it). */
  get history(): EditHistory {
    return this.deps.history;
  }

  /** Whether next edits are asked for at all (the history is fed only then). */
  enabled(): boolean {
    return this.override !== null || this.deps.config.nextEditEnabled();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.inFlight?.abort();
    if (!this.enabled()) return;
    this.timer = setTimeout(() => void this.request(), DEBOUNCE_MS);
  }

  /** Asks for a next edit at the active editor's cursor now; resolves with what happened. */
  async request(): Promise<NextEditOutcome | null> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !this.enabled()) return null;
    const generator = this.override ?? (await this.deps.generator());
    if (!generator) return null;
    this.inFlight?.abort();
    const ac = new AbortController();
    this.inFlight = ac;
    const doc = editor.document;
    const version = doc.version;
    this.stats.requested++;
    let outcome: NextEditOutcome;
    try {
      outcome = await predictNextEdit(generator, {
        path: promptPathOf(doc),
        documentText: doc.getText(),
        cursorOffset: doc.offsetAt(editor.selection.active),
        history: this.deps.history,
        parsesNoWorse: parsesNoWorseWith(this.deps.syntax, doc.languageId),
        signal: ac.signal,
      });
    } catch (err) {
      this.deps.log.warn(`next edit failed: ${errorMessage(err)}`);
      return null;
    } finally {
      if (this.inFlight === ac) this.inFlight = null;
    }
    this.stats.lastMs = outcome.ms;
    if (outcome.kind === 'dropped') {
      this.stats.dropped.set(outcome.reason, (this.stats.dropped.get(outcome.reason) ?? 0) + 1);
      this.deps.log.debug(`next edit dropped (${outcome.reason}) after ${outcome.ms} ms${outcome.detail ? `: ${outcome.detail}` : ''}`);
      return outcome;
    }
    if (doc.version !== version || vscode.window.activeTextEditor !== editor) {
      this.stats.stale++;
      return outcome;
    }
    this.stats.shown++;
    this.shown = { editor, version, edits: outcome.edits };
    const cursor = editor.selection.active;
    if (editor.selection.isEmpty && ghostTextAt(outcome.edits, cursor.line, cursor.character) !== null) {
      // At the cursor: ghost text, which VS Code's Tab accepts and Esc hides (no decoration, no key of ours).
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      this.deps.log.debug(`next edit shown as ghost text after ${outcome.ms} ms`);
      return outcome;
    }
    this.deps.decorations.show(editor, outcome.edits);
    void vscode.commands.executeCommand('setContext', SHOWN_KEY, true);
    this.deps.log.debug(`next edit shown at line ${outcome.edits[0].startLine + 1} after ${outcome.ms} ms`);
    return outcome;
  }

  /** Tab: to the edit when the cursor is elsewhere, else apply it. Returns what it did. */
  async accept(): Promise<'jumped' | 'applied' | 'none'> {
    const s = this.shown;
    if (!s || s.editor.document.version !== s.version || vscode.window.activeTextEditor !== s.editor) {
      this.clear();
      return 'none';
    }
    const first = s.edits[0];
    const last = s.edits[s.edits.length - 1];
    const line = s.editor.selection.active.line;
    if (line < first.startLine || line > last.endLine) {
      const at = new vscode.Position(first.startLine, first.startCharacter);
      s.editor.selection = new vscode.Selection(at, at);
      s.editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      this.stats.jumped++;
      return 'jumped';
    }
    this.clear();
    const ok = await s.editor.edit((b) => {
      for (const e of [...s.edits].reverse()) b.replace(new vscode.Range(e.startLine, e.startCharacter, e.endLine, e.endCharacter), e.newText);
    });
    if (ok) this.stats.applied++;
    return ok ? 'applied' : 'none';
  }

  dismiss(): void {
    if (this.shown) this.stats.dismissed++;
    this.clear();
  }

  private clear(): void {
    if (!this.shown) return;
    this.deps.decorations.clear(this.shown.editor);
    this.shown = null;
    void vscode.commands.executeCommand('setContext', SHOWN_KEY, false);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.inFlight?.abort();
    this.clear();
    for (const s of this.subscriptions) s.dispose();
  }
}
