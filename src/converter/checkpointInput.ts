import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConvertError } from './errors';
import { readJsonObject, validateTokenizer } from './jsonFiles';
import { ggufInput, isGgufInput } from './gguf/ggufInput';
import { Checkpoint } from './safetensors';
import type { TensorSource } from './tensorSource';

/**
 * What a conversion starts from: a Hugging Face checkpoint folder (config.json, tokenizer.json, safetensors), or
 * a GGUF file (one file that holds the weights, the config and the vocabulary as metadata), or a folder holding
 * just one. Either gives the same three things: the config, the weights under Hugging Face's names, and the
 * tokenizer and config files the model folder needs.
 */
export interface CheckpointInput {
  /** The Hugging Face config.json. */
  config: Record<string, unknown>;
  /** Where the config came from, named in errors. */
  configPath: string;
  /** What `converted.from` records in the model's config.json. */
  label: string;
  openWeights(): TensorSource;
  /** Writes the tokenizer (and generation config and licence) files into the model folder. */
  writeSideFiles(work: string): void;
}

/** Files copied as they are from a checkpoint folder (the tokenizer and config ones are required). */
const REQUIRED = ['config.json', 'tokenizer.json'];
const OPTIONAL = ['generation_config.json', 'tokenizer_config.json', 'special_tokens_map.json', 'LICENSE', 'LICENSE.txt', 'README.md'];

export function openCheckpointInput(from: string): CheckpointInput {
  if (!fs.existsSync(from)) throw new ConvertError(from, 'checkpoint folder or GGUF file not found');
  if (isGgufInput(from)) return ggufInput(from);
  if (!fs.statSync(from).isDirectory()) throw new ConvertError(from, 'is neither a checkpoint folder nor a .gguf file');
  for (const f of REQUIRED)
    if (!fs.existsSync(path.join(from, f))) throw new ConvertError(path.join(from, f), 'missing: a checkpoint folder needs config.json and tokenizer.json');
  const configPath = path.join(from, 'config.json');
  validateTokenizer(path.join(from, 'tokenizer.json'));
  return {
    config: readJsonObject(configPath),
    configPath,
    label: path.basename(from),
    openWeights: () => Checkpoint.open(from),
    writeSideFiles(work) {
      for (const f of REQUIRED.concat(OPTIONAL)) {
        const src = path.join(from, f);
        if (fs.existsSync(src) && f !== 'config.json') fs.copyFileSync(src, path.join(work, f));
      }
    },
  };
}
