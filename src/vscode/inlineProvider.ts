import * as vscode from 'vscode';
import type { AdaptiveDebounce } from '../completion/adaptiveDebounce';
import type { CompletionService } from '../completion/completionService';
import type { CompletionOutcome } from '../completion/types';
import type { SessionStats } from '../completion/sessionStats';
import type { CompletionRequest } from '../completion/types';
import type { Config } from './config';
import { toEol } from '../completion/lineEndings';
import { documentSource } from './documentSource';
import type { StatusBar } from './statusBar';

export interface ProviderDeps {
  service: () => CompletionService | null;
  /** Runs the request on the service, or on its fallback when a server's request fails (BackendRouter.complete). */
  complete: (service: CompletionService, req: CompletionRequest, signal: AbortSignal) => Promise<{ outcome: CompletionOutcome; answered: CompletionService }>;
  /** The server's name when `service` is a server's (for the stats). */
  serverName?: (service: CompletionService) => string | undefined;
  enabled: () => boolean;
  config: Config;
  status: StatusBar;
  stats: SessionStats;
  debounce: AdaptiveDebounce;
  log: vscode.LogOutputChannel;
  /** A next edit shown as ghost text at this position: the completion steps aside, so the two never compete. */
  nextEditAt?: (document: vscode.TextDocument, position: vscode.Position) => boolean;
}

/**
 * Inline suggestions for every language. VS Code's own UI does the rest: Tab accepts, Ctrl+Right accepts a
 * word, Alt+] / Alt+[ cycle the alternatives returned on an explicit trigger, and snooze hides them.
 */
export class InlineProvider implements vscode.InlineCompletionItemProvider {
  /**
   * Where the editor was asked again because a block's rest is now cached (refreshWhenFuller): that request
   * is the automatic one continued, not an Alt+\ (the trigger command always says Invoke).
   */
  private refreshing: { uri: string; version: number; line: number; character: number } | null = null;

  constructor(private readonly deps: ProviderDeps) {}

  async provideInlineCompletionItems(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    const { deps } = this;
    const service = deps.service();
    if (!service || !deps.enabled() || !deps.config.enabledFor(document)) return undefined;
    // While the suggest widget is open, its list owns the cursor.
    if (context.selectedCompletionInfo) return undefined;
    if (deps.nextEditAt?.(document, position)) return undefined;
    const refresh = this.refreshing;
    this.refreshing = null;
    const isRefresh =
      refresh !== null &&
      refresh.uri === document.uri.toString() &&
      refresh.version === document.version &&
      refresh.line === position.line &&
      refresh.character === position.character;
    const explicit = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke && !isRefresh;
    const req: CompletionRequest = {
      doc: documentSource(document),
      cursor: { line: position.line, character: position.character },
      languageId: document.languageId,
      path: vscode.workspace.asRelativePath(document.uri, false),
      explicit,
      repoName: vscode.workspace.getWorkspaceFolder(document.uri)?.name,
    };
    const ac = new AbortController();
    const sub = token.onCancellationRequested(() => ac.abort());
    try {
      const peeked = explicit ? null : service.peek(req);
      if (peeked) return this.items(peeked, document, position, service);
      if (!explicit && !(await sleep(deps.debounce.delay(deps.config.debounceMs(document)), token))) return undefined;
      const end = deps.status.begin();
      try {
        const { outcome, answered } = await deps.complete(service, req, ac.signal);
        // A success clears a request error (a crashed worker that restarted), unless the model itself has
        // gone meanwhile (a failed load replaced this service).
        if (deps.status.current === 'error' && deps.service() === answered) deps.status.set('idle');
        if (outcome.fuller && outcome.items.length > 0) this.refreshWhenFuller(outcome.fuller, document, position);
        return this.items(outcome, document, position, answered);
      } finally {
        end();
      }
    } catch (err) {
      // The backend was replaced meanwhile (settings, key or model changed; its requests were cut off): not an error.
      if (deps.service() !== service) return undefined;
      const msg = err instanceof Error ? err.message : String(err);
      deps.log.error(`completion failed: ${msg}`);
      deps.status.set('error', msg);
      return undefined;
    } finally {
      sub.dispose();
    }
  }

  /**
   * A block's first line is shown while the model writes the rest; once the whole block is cached, the editor
   * is asked again at the same place (unchanged document and cursor), and the ghost text grows to the block.
   */
  private refreshWhenFuller(fuller: Promise<boolean>, document: vscode.TextDocument, position: vscode.Position): void {
    const version = document.version;
    void fuller.then((cached) => {
      const editor = vscode.window.activeTextEditor;
      const sel = editor?.selection;
      if (!cached || !editor || editor.document !== document || document.version !== version || !sel?.isEmpty || !sel.active.isEqual(position)) return;
      this.refreshing = { uri: document.uri.toString(), version, line: position.line, character: position.character };
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    });
  }

  private items(o: CompletionOutcome, document: vscode.TextDocument, position: vscode.Position, from: CompletionService): vscode.InlineCompletionItem[] {
    this.deps.stats.record(o, this.deps.serverName?.(from));
    this.deps.status.render();
    const confidence = o.confidence === null ? '' : `, confidence ${o.confidence.toFixed(2)}`;
    if (o.items.length > 0) {
      this.deps.log.debug(
        `${o.source} ${o.mode} ${Math.round(o.latencyMs)} ms${o.stats ? `, prefill ${o.stats.prefillTokens}/${o.stats.promptTokens} tokens` : ''}${confidence}`,
      );
    } else if (o.gated) {
      this.deps.log.debug(`held back (${o.source}${confidence} below ghostline.inline.minConfidence)`);
    }
    const range = new vscode.Range(position, position);
    // The pipeline's text is LF only; a CRLF document gets its own line ending (src/completion/lineEndings.ts).
    // The accepted count stays in LF characters, the same on every platform.
    const eol = document.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
    return o.items.map(
      (text) =>
        new vscode.InlineCompletionItem(toEol(text, eol), range, { title: 'Ghostline: accepted', command: 'ghostline.accepted', arguments: [text.length] }),
    );
  }
}

/** Waits `ms`; false if the token was cancelled meanwhile. */
function sleep(ms: number, token: vscode.CancellationToken): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!token.isCancellationRequested);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      sub.dispose();
      resolve(!token.isCancellationRequested);
    }, ms);
    const sub = token.onCancellationRequested(() => {
      clearTimeout(timer);
      sub.dispose();
      resolve(false);
    });
  });
}
