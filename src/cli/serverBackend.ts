import { FIM_FAMILIES } from '../completion/prompt/fimTemplates';
import { defaultModelDir } from '../engine/host/defaultModel';
import { serverFetch } from '../net/httpTransport';
import { connectServer } from '../servers/connectServer';
import { HealthCheckedGenerator } from '../servers/healthCheckedGenerator';
import { SERVER_KINDS, type ServerKind } from '../servers/protocols';
import { ServerHealth } from '../servers/serverHealth';
import { num, one, type ParsedArgs } from './args';
import type { StdioBackend } from './serveStdio';

export const SERVER_VALUES = ['backend', 'server-url', 'server-model', 'server-fim', 'server-timeout-ms', 'server-context'];

/**
 * serve-stdio against a completion server: connected as the editor connects (src/servers/connectServer.ts), so
 * the format, token ids, grammar steering, context window and calibration are the ones the editor would use,
 * with `--model` (default: the bundled model) as the local model the server is compared with.
 */
export async function serverBackend(args: ParsedArgs, kind: string): Promise<StdioBackend> {
  if (!SERVER_KINDS.includes(kind as ServerKind)) throw new Error(`--backend must be local, ${SERVER_KINDS.join(', ')}; got ${JSON.stringify(kind)}`);
  const url = one(args, 'server-url');
  if (!url || !/^https?:\/\//.test(url)) throw new Error('--server-url must be an http:// or https:// URL');
  const promptFormat = one(args, 'server-fim') ?? 'auto';
  if (promptFormat !== 'auto' && !FIM_FAMILIES.includes(promptFormat)) {
    throw new Error(`--server-fim must be auto or one of ${FIM_FAMILIES.join(', ')}; got ${JSON.stringify(promptFormat)}`);
  }
  const conn = await connectServer({
    kind: kind as ServerKind,
    url,
    model: one(args, 'server-model'),
    apiKey: process.env.GHOSTLINE_SERVER_KEY || undefined,
    // HTTPS_PROXY / NO_PROXY and NODE_EXTRA_CA_CERTS apply, as in the editor.
    fetch: serverFetch({}),
    promptFormat,
    timeoutMs: num(args, 'server-timeout-ms') ?? 10_000,
    contextTokens: num(args, 'server-context') ?? 0,
    localModelDir: one(args, 'model') ?? defaultModelDir(),
  });
  const log = (line: string) => process.stderr.write(`ghostline: ${line}\n`);
  for (const w of conn.warnings) log(`warning: ${w}`);
  if (conn.error) log(`the server did not answer the connection's questions (${conn.error.message}); requests will tell`);
  else log(`connected to ${conn.summary}`);
  // As in the editor: after a failure (or a Retry-After) requests fail at once until the backoff passes.
  const health = new ServerHealth();
  if (conn.error) health.failed(conn.error);
  return { generator: new HealthCheckedGenerator(conn.inline, health), template: conn.template, traits: conn.traits };
}
