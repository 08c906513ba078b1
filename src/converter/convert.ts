import * as fs from 'node:fs';
import * as path from 'node:path';
import { readArchitecture } from './architecture';
import { openCheckpointInput } from './checkpointInput';
import { ConvertError } from './errors';
import { writeLeanGraph } from './leanGraph';
import { OnnxWriter, writeAll } from './onnxWriter';
import type { TensorSource } from './tensorSource';
import type { ConvertOptions, ConvertResult, Quant } from './types';
import { moveFolderInto } from '../platform/folderSwap';
/** Marks a folder still being written; such a folder is never listed or loaded as a model. */
export const PARTIAL_SUFFIX = '.converting';

const ONNX_FILE_FOR: Record<Quant, string> = { q4: 'model_q4.onnx', int8: 'model_int8.onnx', fp32: 'model.onnx' };

/**
 * Hugging Face checkpoint folder (or GGUF file) -> Ghostline model folder with the lean graph. Everything is written to
 * `<out>.converting` and renamed to `out` only when complete, so a cancel, an error or a full disk never
 * leaves a folder that looks like a model.
 */
export async function convertCheckpoint(opts: ConvertOptions): Promise<ConvertResult> {
  const t0 = performance.now();
  const from = path.resolve(opts.from);
  const out = path.resolve(opts.out);
  const quant = opts.quant ?? 'q4';
  const blockSize = opts.blockSize ?? 32;
  const accuracyLevel = opts.accuracyLevel ?? 4;
  if (!['q4', 'int8', 'fp32'].includes(quant)) throw new ConvertError(out, `--quant must be q4, int8 or fp32, got ${JSON.stringify(quant)}`);
  if (!Number.isInteger(blockSize) || blockSize < 16 || blockSize > 256 || (blockSize & (blockSize - 1)) !== 0) {
    throw new ConvertError(out, `--block-size must be a power of two from 16 to 256, got ${blockSize}`);
  }
  if (!Number.isInteger(accuracyLevel) || accuracyLevel < 0 || accuracyLevel > 4)
    throw new ConvertError(out, `--accuracy-level must be 0-4, got ${accuracyLevel}`);
  const headBits = opts.headBits ?? 4;
  if (headBits !== 4 && headBits !== 8) throw new ConvertError(out, `--head-bits must be 4 or 8, got ${JSON.stringify(opts.headBits)}`);
  if (opts.headBits !== undefined && quant !== 'q4') throw new ConvertError(out, `--head-bits applies to --quant q4 only (${quant} has one format throughout)`);
  const input = openCheckpointInput(from);
  if (fs.existsSync(out) && !fs.statSync(out).isDirectory()) throw new ConvertError(out, 'exists and is not a folder');
  if (fs.existsSync(out) && fs.readdirSync(out).length > 0) throw new ConvertError(out, 'already exists and is not empty');

  const { config, configPath } = input;
  const arch = readArchitecture(config, configPath);
  const ck = input.openWeights();
  const work = out + PARTIAL_SUFFIX;
  const onnxName = ONNX_FILE_FOR[quant];
  let writer: OnnxWriter | undefined;
  try {
    checkNoExtraLayers(ck, arch.layers, configPath);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(path.join(work, 'onnx'), { recursive: true });
    writer = new OnnxWriter(path.join(work, 'onnx', onnxName));
    const totalBytes = [...ck.tensors.values()].reduce((s, t) => s + t.bytes, 0);
    let doneBytes = 0;
    const consumed = (bytes: number, tensor: string) => {
      if (opts.signal?.aborted) throw new ConvertError(out, 'conversion cancelled');
      doneBytes += bytes;
      opts.onProgress?.({ doneBytes: Math.min(doneBytes, totalBytes), totalBytes, tensor });
    };
    await writeLeanGraph(ck, arch, writer, { quant, blockSize, accuracyLevel, ...(quant === 'q4' ? { headBits } : {}), consumed });
    input.writeSideFiles(work);
    const ghostline = {
      ...((config.ghostline as object | undefined) ?? {}),
      graph: 'lean-v1',
      converted: { quant, block_size: blockSize, accuracy_level: accuracyLevel, ...(quant === 'q4' ? { head_bits: headBits } : {}), from: input.label },
    };
    writeAll(path.join(work, 'config.json'), Buffer.from(`${JSON.stringify({ ...config, ghostline }, null, 2)}\n`));
    if (opts.signal?.aborted) throw new ConvertError(out, 'conversion cancelled');
    if (fs.existsSync(out)) fs.rmdirSync(out); // empty (checked above)
    // Retried while Windows keeps a just-written file open (a virus scan, the indexer): see folderSwap.ts.
    await moveFolderInto(work, out, { hint: LOCKED_HINT });
  } catch (err) {
    writer?.abort();
    removeQuietly(work);
    throw asWriteError(err);
  } finally {
    ck.close();
  }
  const onnxFile = path.join(out, 'onnx', onnxName);
  const bytes = fs.statSync(onnxFile).size + writer!.dataBytes;
  return { out, onnxFile, bytes, seconds: (performance.now() - t0) / 1000, modelType: arch.modelType, quant };
}

const LOCKED_HINT = 'A virus scan or the search indexer usually lets go within seconds: convert again, or pick another output folder.';

/**
 * Removes the `.converting` folder after a failure without hiding the failure: a file Windows still holds open
 * there is retried by rmSync itself (maxRetries covers EBUSY/EPERM/ENOTEMPTY), and one left anyway keeps the
 * `.converting` name, which is never listed or loaded as a model.
 */
function removeQuietly(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch {
    /* see above */
  }
}

/** Layers in the weights beyond config.json's num_hidden_layers would be dropped silently: a mismatched config. */
function checkNoExtraLayers(ck: TensorSource, layers: number, configPath: string): void {
  for (const name of ck.tensors.keys()) {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    if (m && Number(m[1]) >= layers) {
      throw new ConvertError(configPath, `says num_hidden_layers ${layers} but the checkpoint has tensor "${name}": config.json does not match the weights`);
    }
  }
}

/** A file system error while writing the model folder (mkdir, copy, rename: ENOSPC and the like), named by its file. */
function asWriteError(err: unknown): unknown {
  if (err instanceof ConvertError) return err;
  const e = err as NodeJS.ErrnoException & { dest?: string };
  const file = e?.dest ?? e?.path;
  if (!e?.code || !file) return err;
  return new ConvertError(file, `cannot be written: ${e.code === 'ENOSPC' ? 'the disk is full' : e.message}`);
}
