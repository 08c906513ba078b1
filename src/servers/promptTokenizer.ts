import * as fs from 'node:fs';
import * as path from 'node:path';
import { TextTokenizer } from '../engine/model/tokenizer';
import type { Prompt } from '../engine/shared/prompt';

/** What the server backends need of a tokenizer: the engine's own prompt encoding, and decoding for checks. */
export interface PromptTokenizer {
  /** The prompt's ids exactly as the local engine makes them (document text literal, markers special). */
  encodePrompt(prompt: Prompt): number[];
  /** Document text alone, literally (no markers, no BOS). */
  encodeLiteral(text: string): number[];
  decode(ids: ArrayLike<number>): string;
  /** Added tokens (FIM markers, EOS, file separators) by text. */
  readonly addedTokens: ReadonlyMap<string, number>;
  /** For token healing planned as the local engine plans it (engine/model/tokenHealing.ts). */
  readonly specialIds: ReadonlySet<number>;
  readonly vocabSize: number;
}

/**
 * The local model folder's tokenizer, loaded in the extension host (not asked of the worker over IPC):
 * - it is the engine's own TextTokenizer class over the same tokenizer.json, so the ids are the ones the
 *   local engine would feed its model, by construction;
 * - a server backend without local fallback never starts the worker, and a worker busy with a local
 *   generation would answer a tokenize request only after it: the host needs the ids on every keystroke;
 * - encoding is synchronous: about 10 ms for a 7,900-character prompt on a 2-core machine (the default
 *   context budget is smaller; test/servers/tokenizerCheck.test.ts), against an IPC round trip that waits
 *   behind any local generation; tokenizer.json is small next to a model (0.1 MB here, 7 MB for Qwen2.5-Coder).
 * Throws when the folder has no readable tokenizer.json.
 */
export function loadPromptTokenizer(modelDir: string): PromptTokenizer {
  const tokenizerJson = JSON.parse(fs.readFileSync(path.join(modelDir, 'tokenizer.json'), 'utf8')) as object;
  const configFile = path.join(modelDir, 'tokenizer_config.json');
  const config = fs.existsSync(configFile) ? (JSON.parse(fs.readFileSync(configFile, 'utf8')) as object) : {};
  return new TextTokenizer(tokenizerJson, config);
}
