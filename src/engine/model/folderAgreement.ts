import { ModelFolderError } from '../shared/errors';
import { rotaryPositions } from './graphLimits';
import type { ModelFolder } from './modelFolder';
import type { TextTokenizer } from './tokenizer';

/**
 * Unused logit columns a real export may have: vocabularies are padded to a multiple of 64-256 for speed
 * (Qwen2.5: 151,665 tokens, 151,936 columns; Phi-2: 905 more). Far more means the tokenizer belongs to
 * another model, and its ids would not mean what the model learned.
 */
function maxPadding(columns: number): number {
  return Math.max(1024, Math.floor(columns * 0.05));
}

/** The tokenizer, config.json and the graph must describe the same model: a clear error at load, not garbage later. */
export function checkFilesAgree(folder: ModelFolder, tokenizer: TextTokenizer, columns: number): void {
  const tokFile = `${folder.dir}/tokenizer.json`;
  if (tokenizer.vocabSize > columns) {
    throw new ModelFolderError(tokFile, `the tokenizer has ${tokenizer.vocabSize} tokens but the model's logits have only ${columns} columns`);
  }
  if (columns - tokenizer.vocabSize > maxPadding(columns)) {
    throw new ModelFolderError(
      tokFile,
      `the tokenizer has ${tokenizer.vocabSize} tokens but the model's logits have ${columns} columns: they belong to different models`,
    );
  }
  const declared = folder.config.vocab_size;
  if (typeof declared === 'number' && declared !== columns) {
    throw new ModelFolderError(`${folder.dir}/config.json`, `vocab_size is ${declared} but the ONNX graph's logits have ${columns} columns`);
  }
  const positions = rotaryPositions(folder.onnxPath);
  const ctx = contextLength(folder.config);
  if (positions !== null && ctx > positions) {
    throw new ModelFolderError(
      `${folder.dir}/config.json`,
      `max_position_embeddings (${ctx}) is larger than the ${positions} positions the ONNX graph's rotary tables hold; set it to ${positions} or convert the model again`,
    );
  }
}

export function contextLength(cfg: Record<string, unknown>): number {
  for (const key of ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'seq_length']) {
    const v = cfg[key];
    if (typeof v === 'number' && v > 0) return v;
  }
  return 2048;
}
