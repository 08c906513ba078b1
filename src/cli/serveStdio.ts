import * as readline from 'node:readline';
import { CompletionService } from '../completion/completionService';
import { pickFimTemplate } from '../completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../completion/settings';
import { modelTraits } from '../completion/modelTraits';
import { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import type { EngineClient } from '../engine/host/client';
import { errorMessage } from '../engine/shared/errors';
import { decodeOptionsFromSnake } from './snakeCaseOptions';
import { handleCompletionRequest } from './completionRequest';
import { errorResponse, toResponse } from './response';

/**
 * One JSON request per line in, one JSON response per line out, in order; one engine and one KV cache
 * for the whole stream. A bad request gets finish_reason "error" and the stream goes on.
 */
export async function serveStdio(client: EngineClient, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<void> {
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  const settings = defaultCompletionSettings();
  const template = pickFimTemplate(client.modelInfo?.specialTokens ?? {});
  const info = client.modelInfo;
  const traits = info ? modelTraits(info, (line) => process.stderr.write(`${line}\n`)) : { contextTokens: Infinity };
  const service = new CompletionService(
    client,
    () => template,
    () => settings,
    () => traits,
    new SyntaxRefiner({ log: (line) => process.stderr.write(`${line}\n`) }),
  );
  for await (const line of rl) {
    if (line.trim() === '') continue;
    output.write(`${JSON.stringify(await handleLine(client, service, line))}\n`);
  }
}

async function handleLine(client: EngineClient, service: CompletionService, line: string): Promise<Record<string, unknown>> {
  let req: unknown;
  try {
    req = JSON.parse(line);
  } catch (err) {
    return errorResponse(null, `invalid JSON: ${errorMessage(err)}`);
  }
  if (!req || typeof req !== 'object' || Array.isArray(req)) return errorResponse(null, 'a request must be a JSON object');
  const r = req as Record<string, unknown>;
  const id = r.id ?? null;
  try {
    if (r.prompt === undefined && typeof r.prefix === 'string') return await handleCompletionRequest(service, r);
    if (typeof r.prompt !== 'string') throw new Error('"prompt" (or "prefix" for an editor-style completion) must be a string');
    const options = decodeOptionsFromSnake(r, ['id', 'prompt']);
    return toResponse(id, await client.generate(r.prompt, options));
  } catch (err) {
    return errorResponse(id, errorMessage(err));
  }
}
