import * as vscode from 'vscode';
import type { SessionStats } from '../completion/sessionStats';

export type EngineState = 'loading' | 'idle' | 'generating' | 'disabled' | 'error';

/** The status bar item: state, last latency and KV reuse; a click opens Ghostline's menu. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('ghostline.status', vscode.StatusBarAlignment.Right, 100);
  private state: EngineState = 'loading';
  private detail = '';
  private generating = 0;

  constructor(private readonly stats: SessionStats) {
    this.item.name = 'Ghostline';
    this.item.command = 'ghostline.showMenu';
    this.render();
    this.item.show();
  }

  get current(): EngineState {
    return this.state;
  }

  set(state: Exclude<EngineState, 'generating'>, detail = ''): void {
    this.state = state;
    this.detail = detail;
    this.render();
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
    const busy = this.generating > 0 && (this.state === 'idle' || this.state === 'generating');
    const shown: EngineState = busy ? 'generating' : this.state === 'generating' ? 'idle' : this.state;
    const icon = { loading: '$(loading~spin)', idle: '$(sparkle)', generating: '$(loading~spin)', disabled: '$(circle-slash)', error: '$(warning)' }[shown];
    let text = `${icon} Ghostline`;
    if (shown === 'idle' && this.stats.lastLatencyMs !== null) {
      text += ` ${Math.round(this.stats.lastLatencyMs)} ms`;
      if (this.stats.lastReuse !== null) text += ` · ${Math.round(this.stats.lastReuse * 100)}% reused`;
    }
    this.item.text = text;
    this.item.tooltip = `Ghostline: ${shown}${this.detail ? ` (${this.detail})` : ''}\n${this.stats.summary()}\nClick for commands.`;
    this.item.backgroundColor = shown === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.accessibilityInformation = { label: `Ghostline ${shown}` };
  }

  dispose(): void {
    this.item.dispose();
  }
}
