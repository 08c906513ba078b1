import * as vscode from 'vscode';

/** One key per server origin: a key set for one server is never sent to another the settings name later. */
export function serverKeyName(url: string): string {
  return `ghostline.serverKey:${originOf(url)}`;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url; // an invalid URL never connects; the name only has to be stable
  }
}

/**
 * "Ghostline: Set Server Key": the API key goes to VS Code's SecretStorage (the OS keychain), never to
 * settings or the log. An empty entry removes it. Returns whether a key is now stored (for tests).
 */
export async function setServerKey(secrets: vscode.SecretStorage, url: string, args?: { key?: string }): Promise<boolean | undefined> {
  if (!url) {
    void vscode.window.showWarningMessage('Ghostline: set ghostline.server.url in your user settings first; the key is stored for that server.');
    return undefined;
  }
  const key =
    args?.key ??
    (await vscode.window.showInputBox({
      title: 'Ghostline: Set Server Key',
      prompt: `API key for ${originOf(url)} (sent as "Authorization: Bearer"). Leave empty to remove the stored key.`,
      password: true,
      ignoreFocusOut: true,
    }));
  if (key === undefined) return undefined;
  const name = serverKeyName(url);
  if (key.trim() === '') {
    await secrets.delete(name);
    void vscode.window.setStatusBarMessage('Ghostline: server key removed', 3000);
    return false;
  }
  await secrets.store(name, key.trim());
  void vscode.window.setStatusBarMessage('Ghostline: server key stored', 3000);
  return true;
}
