import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckpointInput } from '../checkpointInput';
import { readJsonObject, validateTokenizer } from '../jsonFiles';
import { writeAll } from '../onnxWriter';
import { ConvertError } from '../errors';
import { GgufCheckpoint } from './ggufCheckpoint';
import { configFromGguf } from './ggufConfig';
import { readGgufHeader } from './ggufFile';
import { ggufSpecialIds, tokenizerFromGguf } from './ggufTokenizer';

/**
 * A GGUF file as a conversion input: the config and, unless the model's own tokenizer.json lies beside the file,
 * the tokenizer are rebuilt from its metadata. A folder is a GGUF input when it holds .gguf files and no safetensors
 * weights (the folder Download Model fills); it must then hold exactly one, or the message asks which.
 */
export function isGgufInput(from: string): boolean {
  const stat = fs.statSync(from);
  if (stat.isFile()) return from.toLowerCase().endsWith('.gguf');
  if (!stat.isDirectory()) return false;
  const names = fs.readdirSync(from);
  if (names.some((n) => n.endsWith('.safetensors') || n === 'model.safetensors.index.json')) return false;
  return names.filter((n) => n.toLowerCase().endsWith('.gguf')).length >= 1;
}

export function ggufInput(from: string): CheckpointInput {
  const file = fs.statSync(from).isDirectory() ? onlyGguf(from) : from;
  const header = readGgufHeader(file);
  const rebuilt = tokenizerFromGgufOrBeside(file, header);
  const config = configFromGguf(header, rebuilt.eos, rebuilt.bos);
  const headDim = (config.head_dim as number | undefined) ?? (config.hidden_size as number) / (config.num_attention_heads as number);
  return {
    config,
    configPath: file,
    label: path.basename(file),
    openWeights: () => GgufCheckpoint.open(file, header, config.model_type === 'llama' ? headDim : undefined),
    writeSideFiles(work) {
      const json = (name: string, v: unknown) => writeAll(path.join(work, name), Buffer.from(`${JSON.stringify(v, null, 2)}\n`));
      if (rebuilt.besideDir) {
        for (const f of ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) {
          const src = path.join(rebuilt.besideDir, f);
          if (fs.existsSync(src)) fs.copyFileSync(src, path.join(work, f));
        }
      } else {
        json('tokenizer.json', rebuilt.tokenizerJson);
        json('tokenizer_config.json', rebuilt.tokenizerConfig);
      }
      json('generation_config.json', {
        ...(rebuilt.bos !== undefined ? { bos_token_id: rebuilt.bos } : {}),
        ...(rebuilt.eos.length ? { eos_token_id: rebuilt.eos.length === 1 ? rebuilt.eos[0] : rebuilt.eos } : {}),
      });
    },
  };
}

function onlyGguf(dir: string): string {
  const found = fs.readdirSync(dir).filter((n) => n.toLowerCase().endsWith('.gguf'));
  if (found.length !== 1) throw new ConvertError(dir, `holds ${found.length} .gguf files (${found.join(', ')}): name the one to convert`);
  return path.join(dir, found[0]);
}

/** The model's own tokenizer.json beside the file wins over one rebuilt from the metadata. */
function tokenizerFromGgufOrBeside(file: string, header: ReturnType<typeof readGgufHeader>) {
  const dir = path.dirname(file);
  const beside = path.join(dir, 'tokenizer.json');
  if (fs.existsSync(beside)) {
    validateTokenizer(beside);
    const cfg = path.join(dir, 'tokenizer_config.json');
    if (fs.existsSync(cfg)) readJsonObject(cfg); // copied as it is: refused here if it is not JSON
    return { besideDir: dir, ...ggufSpecialIds(header), tokenizerJson: undefined, tokenizerConfig: undefined };
  }
  return { besideDir: undefined, ...tokenizerFromGguf(header) };
}
