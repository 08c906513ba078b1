import * as readline from 'node:readline';
import { CompletionService } from '../completion/completionService';
import type { ModelTraits } from '../completion/types';
import type { Generator } from '../completion/generator';
import { type FimTemplate, pickFimTemplate } from '../completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../completion/settings';
import { modelTraits } from '../completion/modelTraits';
import { SyntaxRefiner } from '../completion/syntax/syntaxRefiner';
import type { EngineClient } from '../engine/host/client';
import { errorMessage } from '../engine/shared/errors';
import { decodeOptionsFromSnake } from './snakeCaseOptions';
import { handleCompletionRequest } from './completionRequest';
import { errorResponse, toResponse } from './response';

/** Where serve-stdio's tokens come from: the local engine, or a server; the pipeline is the same. */
export interface StdioBackend {
  generator: Generator;
  template: FimTemplate | null;
  traits: ModelTraits;
}

/** The local engine as a serve-stdio backend (the worker client has loaded a model). */
export function localBackend(client: EngineClient): StdioBackend {
  const info = client.modelInfo;
  return {
    generator: client,
    template: pickFimTemplate(info?.specialTokens ?? {}),
    traits: info ? modelTraits(info, (line) => process.stderr.write(`${line}\n`)) : { contextTokens: Infinity },
  };
}

/**
 * One JSON request per line in, one JSON response per line out, in order; one backend (and, locally, one
 * KV cache) for the whole stream. A bad request gets finish_reason "error" and the stream goes on.
 */
export async function serveStdio(backend: StdioBackend, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<void> {
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  const settings = defaultCompletionSettings();
  const service = new CompletionService(
    backend.generator,
    () => backend.template,
    () => settings,
    () => backend.traits,
    new SyntaxRefiner({ log: (line) => process.stderr.write(`${line}\n`) }),
  );
  for await (const line of rl) {
    if (line.trim() === '') continue;
    output.write(`${JSON.stringify(await handleLine(backend.generator, service, line))}\n`);
  }
}

async function handleLine(generator: Generator, service: CompletionService, line: string): Promise<Record<string, unknown>> {
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
    return toResponse(id, await generator.generate(r.prompt, options));
  } catch (err) {
    return errorResponse(id, errorMessage(err));
  }
}
