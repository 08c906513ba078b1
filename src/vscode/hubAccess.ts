import * as vscode from 'vscode';
import { resolveEndpoint } from '../hub/hubClient';

/** Where "Ghostline: Set Hugging Face Token" keeps the token (VS Code secret storage: the OS keychain). */
export const TOKEN_SECRET = 'ghostline.hubToken';

/** The endpoint: the `ghostline.hub.endpoint` setting when the user set it, else HF_ENDPOINT, else huggingface.co. */
export function hubEndpoint(): string {
  // Machine-scoped setting: only the user's own value counts (a workspace must not redirect downloads or the token).
  const explicit = vscode.workspace.getConfiguration('ghostline').inspect<string>('hub.endpoint')?.globalValue;
  return resolveEndpoint(explicit || undefined);
}

/** The token: SecretStorage first (set by the command), then HF_TOKEN / HUGGING_FACE_HUB_TOKEN. */
async function hubToken(context: vscode.ExtensionContext): Promise<string | undefined> {
  const stored = await context.secrets.get(TOKEN_SECRET);
  return stored || process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined;
}

export interface HubAccess {
  endpoint: string;
  token?: string;
}

/** The endpoint and token a download uses, or undefined after telling the user the endpoint is not a URL. */
export async function hubAccess(context: vscode.ExtensionContext): Promise<HubAccess | undefined> {
  let endpoint: string;
  try {
    endpoint = hubEndpoint();
  } catch (e) {
    void vscode.window.showErrorMessage(`Ghostline: ${(e as Error).message} (setting ghostline.hub.endpoint or HF_ENDPOINT)`);
    return undefined;
  }
  return { endpoint, token: await hubToken(context) };
}

/** "Ghostline: Set Hugging Face Token": stores a read token, or forgets the stored one when left empty. */
export async function setHubToken(context: vscode.ExtensionContext): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: 'Ghostline: Hugging Face Token',
    prompt: 'A read token from huggingface.co/settings/tokens, for gated or private models. Empty: forget the stored token.',
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'hf_…',
    validateInput: (v) => (v && /\s/.test(v.trim()) ? 'A token has no spaces' : undefined),
  });
  if (value === undefined) return;
  if (value.trim()) {
    await context.secrets.store(TOKEN_SECRET, value.trim());
    void vscode.window.showInformationMessage('Ghostline: Hugging Face token stored in the OS keychain (VS Code secret storage).');
  } else {
    await context.secrets.delete(TOKEN_SECRET);
    void vscode.window.showInformationMessage(
      process.env.HF_TOKEN ? 'Ghostline: stored token removed; HF_TOKEN from the environment is still used.' : 'Ghostline: stored Hugging Face token removed.',
    );
  }
}
