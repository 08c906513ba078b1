import * as vscode from 'vscode';
import type { SessionStats } from '../completion/sessionStats';

/** `offline`: the team server cannot be reached and the local model answers meanwhile. */
export type EngineState = 'loading' | 'idle' | 'generating' | 'disabled' | 'error' | 'offline';

/** The status bar item: state, last latency and KV reuse; a click opens Ghostline's menu. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('ghostline.status', vscode.StatusBarAlignment.Right, 100);
  private state: EngineState = 'loading';
  private detailText = '';
  private generating = 0;
  /** A standing warning about the connection (the server's tokenizer differs from the model's), until the next connect. */
  private warning: string | null = null;
  /** Where the local model runs and why (describeDevice), for the tooltip. */
  private device: string | null = null;

  constructor(private readonly stats: SessionStats) {
    this.item.name = 'Ghostline';
    this.item.command = 'ghostline.showMenu';
    this.render();
    this.item.show();
  }

  get current(): EngineState {
    return this.state;
  }

  /** The tooltip as shown (state, device, stats). */
  get tooltip(): string {
    return String(this.item.tooltip ?? '');
  }

  /** What the current state is about (the model, the server, or the error). */
  get detail(): string {
    return this.detailText;
  }

  set(state: Exclude<EngineState, 'generating'>, detail = ''): void {
    this.state = state;
    this.detailText = detail;
    this.render();
  }

  /** Shows (or, with null, clears) a warning that stays while the state changes: a $(warning) and the tooltip's first line. */
  setWarning(text: string | null): void {
    this.warning = text;
    this.render();
  }

  /** Names the local model's device in the tooltip (null: none loaded, or a server answers). */
  setDevice(text: string | null): void {
    this.device = text;
    this.render();
  }

  /** Whether a generation is running now (begin() not yet ended). */
  get busy(): boolean {
    return this.generating > 0;
  }

  /** Marks a generation; the returned function ends it (call it in `finally`: never stuck on "generating"). */
  begin(): () => void {
    this.generating++;
    this.render();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.generating--;
      this.render();
    };
  }

  render(): void {
    const busy = this.generating > 0 && (this.state === 'idle' || this.state === 'generating' || this.state === 'offline');
    const shown: EngineState = busy ? 'generating' : this.state === 'generating' ? 'idle' : this.state;
    const icon = {
      loading: '$(loading~spin)',
      idle: '$(sparkle)',
      generating: '$(loading~spin)',
      disabled: '$(circle-slash)',
      error: '$(warning)',
      offline: '$(debug-disconnect)',
    }[shown];
    let text = `${icon} Ghostline`;
    const server = this.stats.lastServer;
    if ((shown === 'idle' || shown === 'offline') && this.stats.lastLatencyMs !== null) {
      text += ` ${Math.round(this.stats.lastLatencyMs)} ms`;
      // A server's own time shows how much of the latency is the network and the client.
      if (server) text += ` (server ${Math.round(server.prefillMs + server.decodeMs)} ms)`;
      if (this.stats.lastReuse !== null) text += ` · ${Math.round(this.stats.lastReuse * 100)}% ${server ? 'cached' : 'reused'}`;
    }
    if (this.warning && shown !== 'error') text += ' $(warning)';
    this.item.text = text;
    const warning = this.warning ? `Warning: ${this.warning}\n` : '';
    const device = this.device ? `\nRuns on the ${this.device}` : '';
    this.item.tooltip = `${warning}Ghostline: ${shown}${this.detailText ? ` (${this.detailText})` : ''}${device}\n${this.stats.summary()}\nClick for commands.`;
    this.item.backgroundColor =
      shown === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : shown === 'offline'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: `Ghostline ${shown}` };
  }

  dispose(): void {
    this.item.dispose();
  }
}
