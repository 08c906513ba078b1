import type { InferenceSession } from 'onnxruntime-node';
import { ModelFolderError } from '../shared/errors';
import { leanNames } from './leanContract';

export type KvType = 'float32' | 'float16';

/** What the ONNX graph takes and returns, read from the session itself rather than guessed from file names. */
export interface IoContract {
  /** 'hf': the Hugging Face / Optimum contract (growing past in, whole present out); 'lean': Ghostline's own (leanContract.ts). */
  kind: 'hf' | 'lean';
  layers: number;
  kvHeads: number;
  headDim: number;
  kvType: KvType;
  logitsType: KvType;
  /** Logits columns (may exceed the tokenizer's vocabulary: padding rows). */
  vocab: number;
  hasPositionIds: boolean;
  hasUseCacheBranch: boolean;
  hasNumLogitsToKeep: boolean;
  /** The graph also returns each logits row's log-sum-exp (lean graphs from this converter version on). */
  hasLogitsLse: boolean;
  pastName(layer: number, kind: 'key' | 'value'): string;
  presentName(layer: number, kind: 'key' | 'value'): string;
}

type Meta = InferenceSession.ValueMetadata;

export function readIoContract(
  session: Pick<InferenceSession, 'inputNames' | 'outputNames' | 'inputMetadata' | 'outputMetadata'>,
  config: Record<string, unknown>,
  file: string,
): IoContract {
  const inputs = new Set(session.inputNames);
  const outputs = new Set(session.outputNames);
  const missing = (what: string) => new ModelFolderError(file, `the ONNX graph has no ${what}`);
  if (!inputs.has('input_ids')) throw missing('input "input_ids"');
  if (!outputs.has('logits')) throw missing('output "logits"');
  if (inputs.has(leanNames.cacheKey(0))) return readLeanContract(session, config, file);
  if (!inputs.has('attention_mask')) throw missing('input "attention_mask"');
  if ([...inputs].some((n) => /^past_key_values\.\d+\.key_value$/.test(n))) {
    throw new ModelFolderError(file, 'uses the fused past_key_values.{i}.key_value layout (old gpt_bigcode export), which Ghostline does not support');
  }

  let layers = 0;
  while (inputs.has(`past_key_values.${layers}.key`)) layers++;
  if (layers === 0) throw missing('"past_key_values.{i}.key" inputs: it was exported without a KV cache (use an export "with past")');
  for (let i = 0; i < layers; i++) {
    for (const name of [`past_key_values.${i}.value`]) if (!inputs.has(name)) throw missing(`input "${name}"`);
    for (const name of [`present.${i}.key`, `present.${i}.value`]) if (!outputs.has(name)) throw missing(`output "${name}"`);
  }
  const declared = config.num_hidden_layers ?? config.n_layer ?? config.num_layers;
  if (typeof declared === 'number' && declared !== layers) {
    throw new ModelFolderError(file, `has ${layers} layers of KV cache but config.json says num_hidden_layers = ${declared}`);
  }

  const meta = (list: readonly Meta[] | undefined, name: string) => list?.find((m) => m.name === name);
  const pastMeta = meta(session.inputMetadata, 'past_key_values.0.key');
  const logitsMeta = meta(session.outputMetadata, 'logits');
  const dims = (m: Meta | undefined) => (m?.isTensor ? m.shape : []);
  const dtype = (m: Meta | undefined): string => (m?.isTensor ? m.type : 'float32');

  const kvType = dtype(pastMeta);
  if (kvType !== 'float32' && kvType !== 'float16') throw new ModelFolderError(file, `KV cache type ${kvType} is not supported (float32 or float16)`);
  const logitsType = dtype(logitsMeta);
  if (logitsType !== 'float32' && logitsType !== 'float16') throw new ModelFolderError(file, `logits type ${logitsType} is not supported`);

  const pastDims = dims(pastMeta);
  const heads = num(config.num_attention_heads);
  const hidden = num(config.hidden_size);
  const kvHeads = typeof pastDims[1] === 'number' ? pastDims[1] : (num(config.num_key_value_heads) ?? heads);
  const headDim = typeof pastDims[3] === 'number' ? pastDims[3] : (num(config.head_dim) ?? (hidden && heads ? hidden / heads : undefined));
  if (!kvHeads || !headDim) {
    throw new ModelFolderError(
      file,
      'cannot tell the KV head count and head size: the graph leaves them symbolic and config.json lacks num_key_value_heads / head_dim',
    );
  }
  const logitsDims = dims(logitsMeta);
  const vocab = typeof logitsDims[2] === 'number' ? logitsDims[2] : num(config.vocab_size);
  if (!vocab) throw new ModelFolderError(file, 'cannot tell the vocabulary size: logits dimension is symbolic and config.json has no vocab_size');

  return {
    kind: 'hf',
    layers,
    kvHeads,
    headDim,
    kvType,
    logitsType,
    vocab,
    hasPositionIds: inputs.has('position_ids'),
    hasUseCacheBranch: inputs.has('use_cache_branch'),
    hasNumLogitsToKeep: inputs.has('num_logits_to_keep'),
    hasLogitsLse: false,
    pastName: (i, kind) => `past_key_values.${i}.${kind}`,
    presentName: (i, kind) => `present.${i}.${kind}`,
  };
}

/** Ghostline's lean contract: everything is declared in the graph with fixed sizes. */
function readLeanContract(session: Parameters<typeof readIoContract>[0], config: Record<string, unknown>, file: string): IoContract {
  const inputs = new Set(session.inputNames);
  const bad = (what: string) => new ModelFolderError(file, `is a Ghostline lean graph but ${what}`);
  for (const n of [leanNames.positionIds, leanNames.attentionBias, leanNames.keep]) if (!inputs.has(n)) throw bad(`has no input "${n}"`);
  if (!session.outputNames.includes(leanNames.newKv)) throw bad(`has no output "${leanNames.newKv}"`);
  let layers = 0;
  while (inputs.has(leanNames.cacheKey(layers))) layers++;
  const declared = config.num_hidden_layers;
  if (typeof declared === 'number' && declared !== layers)
    throw new ModelFolderError(file, `has ${layers} layers of KV cache but config.json says num_hidden_layers = ${declared}`);
  const shape = (list: readonly Meta[] | undefined, name: string) => {
    const m = list?.find((x) => x.name === name);
    return m?.isTensor ? m.shape : [];
  };
  const [, kvHeads, headDim] = shape(session.inputMetadata, leanNames.cacheKey(0));
  const vocab = shape(session.outputMetadata, leanNames.logits)[2];
  if (typeof kvHeads !== 'number' || typeof headDim !== 'number' || typeof vocab !== 'number')
    throw bad('declares no fixed KV head count, head size or vocabulary');
  return {
    kind: 'lean',
    layers,
    kvHeads,
    headDim,
    kvType: 'float32',
    logitsType: 'float32',
    vocab,
    hasPositionIds: true,
    hasUseCacheBranch: false,
    hasNumLogitsToKeep: true,
    hasLogitsLse: session.outputNames.includes(leanNames.logitsLse),
    pastName: (i, kind) => (kind === 'key' ? leanNames.cacheKey(i) : leanNames.cacheValue(i)),
    presentName: () => leanNames.newKv,
  };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}
