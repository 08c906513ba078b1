/**
 * Curated models Ghostline can download, and the choice of files for any other repo.
 *
 * Sources: the public file listings of these repos on huggingface.co as stored in our reference index
 * (no internet here). Revisions are "main" except where a full commit hash was visible in a listing:
 * pin the others to a commit once someone can query the hub (`/api/models/{repo}` gives `sha`).
 * Sizes are the listed sizes of the chosen files (approximate; the hub's X-Linked-Size is what counts).
 */
import { ONNX_PREFERENCE } from '../engine/shared/onnxPreference';

export interface ModelFile {
  /** Path inside the repo, e.g. `onnx/model_quantized.onnx`. */
  path: string;
  /** A missing optional file (404) is skipped instead of failing the download. */
  optional?: boolean;
}

export interface RecommendedModel {
  repo: string;
  revision: string;
  /** Short name for pickers. */
  label: string;
  files: ModelFile[];
  /** Approximate total download in bytes. */
  approxBytes: number;
  license: string;
  /** What it is good for, one sentence. */
  description: string;
  /** FIM (fill-in-the-middle) support: completion with the text after the cursor. */
  fim: boolean;
  /**
   * 'listed': the file names were seen in the repo's public listing; 'unverified': inferred (see the comment
   * on the entry), the download fails with a clear 404 if a name is wrong.
   */
  verified: 'listed' | 'unverified';
  /**
   * 'onnx': a ready ONNX export, downloaded into the model folder as is. 'checkpoint': a Hugging Face safetensors
   * checkpoint, downloaded into `<storage>/checkpoints/` and converted on the user's machine
   * (src/hub/installCheckpoint.ts); `files` are then only the files fetched first, the weights come from
   * `model.safetensors` or the shards its index names.
   */
  kind: 'onnx' | 'checkpoint';
  /** Checkpoints published as GGUF: the one file of the repo to download and convert. */
  gguf?: string;
  /** What the model is for: completions at the cursor (the default) or next edits (`ghostline.nextEdit.modelPath`). */
  purpose?: 'completions' | 'next-edit';
}

/** The tokenizer and config files every model folder needs (generation_config.json is optional). */
export function commonFiles(): ModelFile[] {
  return [{ path: 'config.json' }, { path: 'generation_config.json', optional: true }, { path: 'tokenizer.json' }, { path: 'tokenizer_config.json' }];
}

/** The weights of a checkpoint: one file, or an index naming the shards. */
export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX = 'model.safetensors.index.json';

/**
 * What a checkpoint download fetches before it knows its weights: config and tokenizer files, and the shard
 * index when the repo has one (optional: a single-file checkpoint has none).
 */
export function checkpointFiles(): ModelFile[] {
  return [...commonFiles(), { path: SAFETENSORS_INDEX, optional: true }];
}

/**
 * The weight formats of a GGUF repo in the order Ghostline takes them: those it converts with nothing lost worth
 * measuring first (ggml's Q8_0 codes are Ghostline's int8 codes), then the K-quants from the largest, the legacy
 * formats, and F32 last (exact, but four times Q8_0's download).
 */
const GGUF_PREFERENCE = ['q8_0', 'f16', 'bf16', 'q6_k', 'q5_k_m', 'q5_k_s', 'q5_k', 'q4_k_m', 'q4_k_s', 'q4_k', 'q5_1', 'q5_0', 'q4_1', 'q4_0', 'f32'];

/**
 * The GGUF file of a repo listing to download for conversion, or undefined when there is none Ghostline reads:
 * split files (`-00001-of-00003.gguf`) and vision projectors are left out, and so are formats the converter
 * refuses (Q2_K, Q3_K, the IQ formats).
 */
export function pickGgufFile(all: readonly string[]): string | undefined {
  const candidates = all.filter((f) => /\.gguf$/i.test(f) && !/-\d{5}-of-\d{5}\.gguf$/i.test(f) && !/mmproj/i.test(f));
  const format = (f: string) => {
    const name = f.toLowerCase().split('/').pop()!;
    return GGUF_PREFERENCE.findIndex((q) => new RegExp(`(^|[._-])${q}([._-]|$)`).test(name.replace(/\.gguf$/, '')));
  };
  const known = candidates.filter((f) => format(f) >= 0).sort((a, b) => format(a) - format(b) || a.length - b.length || a.localeCompare(b));
  return known[0];
}

/** What a GGUF download fetches: the file, and the repo's own tokenizer files where it has them. */
export function ggufFiles(file: string): ModelFile[] {
  return [{ path: file }, { path: 'tokenizer.json', optional: true }, { path: 'tokenizer_config.json', optional: true }];
}

const MB = 1_000_000;
const GB = 1_000_000_000;

/**
 * Base checkpoints with trained fill-in-the-middle, converted on the user's machine (q4 ONNX). Sizes are the
 * hub's safetensors sizes as listed in issue 12 (bf16 unless noted); the converted q4 folder is smaller.
 * Revisions are "main": pin them to a commit once someone can query the hub.
 */
const CHECKPOINTS: readonly RecommendedModel[] = [
  {
    // Single model.safetensors (988 MB, bf16), tied embeddings.
    repo: 'Qwen/Qwen2.5-Coder-0.5B',
    revision: 'main',
    label: 'Qwen2.5-Coder 0.5B base (converted to q4)',
    files: checkpointFiles(),
    approxBytes: 988 * MB + 8 * MB,
    license: 'Apache-2.0',
    description: 'Base code model trained for fill-in-the-middle, with repo-level tokens. Downloaded as a checkpoint and converted on this machine.',
    fim: true,
    verified: 'listed',
    kind: 'checkpoint',
  },
  {
    // Single model.safetensors (3.09 GB, bf16).
    repo: 'Qwen/Qwen2.5-Coder-1.5B',
    revision: 'main',
    label: 'Qwen2.5-Coder 1.5B base (converted to q4)',
    files: checkpointFiles(),
    approxBytes: 3090 * MB + 8 * MB,
    license: 'Apache-2.0',
    description: 'Better FIM completions than the 0.5B, about 3x slower. Converted on this machine; needs 8+ GB RAM to convert.',
    fim: true,
    verified: 'listed',
    kind: 'checkpoint',
  },
  {
    // Single model.safetensors (269 MB, bf16).
    repo: 'HuggingFaceTB/SmolLM2-135M',
    revision: 'main',
    label: 'SmolLM2 135M base (converted to q4)',
    files: checkpointFiles(),
    approxBytes: 269 * MB + 3 * MB,
    license: 'Apache-2.0',
    // fim: false as for the Instruct export below: the FIM tokens are in the vocabulary, FIM training is not documented.
    description: 'Tiny and fast base model trained with a lot of code; StarCoder-style FIM tokens in its vocabulary. For slow machines.',
    fim: false,
    verified: 'listed',
    kind: 'checkpoint',
  },
  {
    // Single model.safetensors (724 MB, bf16).
    repo: 'HuggingFaceTB/SmolLM2-360M',
    revision: 'main',
    label: 'SmolLM2 360M base (converted to q4)',
    files: checkpointFiles(),
    approxBytes: 724 * MB + 3 * MB,
    license: 'Apache-2.0',
    description: 'Small base model with StarCoder-style FIM tokens in its vocabulary; between the 135M and Qwen 0.5B in speed and quality.',
    fim: false,
    verified: 'listed',
    kind: 'checkpoint',
  },
  {
    // UNVERIFIED: the repo's main branch ships pytorch_model.bin (2.69 GB); a model.safetensors may exist only on
    // a refs/pr revision. Without one the download stops with "this repo has no safetensors weights".
    repo: 'deepseek-ai/deepseek-coder-1.3b-base',
    revision: 'main',
    label: 'DeepSeek-Coder 1.3B base (converted to q4)',
    files: checkpointFiles(),
    approxBytes: 2690 * MB + 3 * MB,
    license: 'DeepSeek License (commercial use allowed, use-based restrictions)',
    description: 'Base code model trained for fill-in-the-middle; full multi-head KV cache (large memory per token).',
    fim: true,
    verified: 'unverified',
    kind: 'checkpoint',
  },
  {
    // fp32 weights in 2 shards named by model.safetensors.index.json: 12.1 GB to download (the q4 result is
    // far smaller). The shard names are read from the index.
    repo: 'bigcode/starcoder2-3b',
    revision: 'main',
    label: 'StarCoder2 3B (converted to q4; 12.1 GB fp32 download)',
    files: checkpointFiles(),
    approxBytes: 12.1 * GB,
    license: 'BigCode OpenRAIL-M (use-based restrictions)',
    description: 'Code model with FIM trained on The Stack v2. A 12.1 GB fp32 download; needs 16+ GB RAM to convert.',
    fim: true,
    verified: 'listed',
    kind: 'checkpoint',
  },
];

/**
 * Models trained for next edits, in the prompt format Ghostline speaks (src/completion/nextEdit/sweepPrompt.ts).
 * Sweep publishes them only as GGUF (Q8_0): the file is downloaded and converted here like a checkpoint
 * (src/converter/gguf/). The file names are those that llama.cpp setups and Nix derivations (with hashes) name
 * for these repos; the hub listing itself was not reachable from here, so they are marked unverified. Where the
 * repo has no file of that name, the download takes the repo's best GGUF instead (installCheckpoint.ts).
 */
const NEXT_EDIT: readonly RecommendedModel[] = [
  {
    repo: 'sweepai/sweep-next-edit-0.5B',
    revision: 'main',
    label: 'Sweep next-edit 0.5B (GGUF Q8_0, converted to q4)',
    files: ggufFiles('sweep-next-edit-0.5b.q8_0.gguf'),
    gguf: 'sweep-next-edit-0.5b.q8_0.gguf',
    approxBytes: 531 * MB,
    license: 'see the model card',
    description: 'Proposes the edit that follows yours, anywhere near the cursor (Qwen2.5-Coder 0.5B fine-tune). For ghostline.nextEdit.',
    fim: false,
    verified: 'unverified',
    kind: 'checkpoint',
    purpose: 'next-edit',
  },
  {
    repo: 'sweepai/sweep-next-edit-1.5B',
    revision: 'main',
    label: 'Sweep next-edit 1.5B (GGUF Q8_0, converted to q4)',
    files: ggufFiles('sweep-next-edit-1.5b.q8_0.v2.gguf'),
    gguf: 'sweep-next-edit-1.5b.q8_0.v2.gguf',
    approxBytes: 1650 * MB,
    license: 'see the model card',
    description: 'Better next edits than the 0.5B, about 3x slower on a CPU (Qwen2.5-Coder 1.5B fine-tune). For ghostline.nextEdit.',
    fim: false,
    verified: 'unverified',
    kind: 'checkpoint',
    purpose: 'next-edit',
  },
];

/** Checkpoints first (converted here, base models with FIM), then next-edit models, then ready ONNX exports. */
export const RECOMMENDED_MODELS: readonly RecommendedModel[] = [
  ...CHECKPOINTS,
  ...NEXT_EDIT,
  {
    // Listing seen (onnx/ at commit cdfe1d2, Nov 2024): model.onnx + .onnx_data (fp32), model_fp16, model_int8,
    // model_q4 (862 MB: int4 MatMuls, fp32 embeddings), model_q4f16, model_quantized (639 MB, int8), model_uint8,
    // model_bnb4. int8 is the smallest CPU format here. Only short commit ids were visible: revision "main".
    repo: 'onnx-community/Qwen2.5-Coder-0.5B-Instruct',
    revision: 'main',
    label: 'Qwen2.5-Coder 0.5B Instruct (int8)',
    files: [...commonFiles(), { path: 'onnx/model_quantized.onnx' }],
    approxBytes: 639 * MB + 8 * MB,
    license: 'Apache-2.0',
    description:
      'Best quality for its size on a laptop CPU; Qwen FIM tokens and repo-level context. Instruct-tuned (no ONNX export of the 0.5B base model was found).',
    fim: true,
    verified: 'listed',
    kind: 'onnx',
  },
  {
    // Listing seen at this full commit: onnx/model_quantized.onnx 1.58 GB (int8), model_q4.onnx 1.79 GB,
    // model.onnx + model.onnx_data 6.21 GB (fp32). The base model: FIM as trained.
    repo: 'onnx-community/Qwen2.5-Coder-1.5B',
    revision: '3fbe71c1c9eae153ace80edc90f92ac5b5069457',
    label: 'Qwen2.5-Coder 1.5B base (int8)',
    files: [...commonFiles(), { path: 'onnx/model_quantized.onnx' }],
    approxBytes: 1580 * MB + 8 * MB,
    license: 'Apache-2.0',
    description: 'Base code model with fill-in-the-middle and repo-level tokens: better completions, about 3x slower than the 0.5B. Needs 8+ GB RAM.',
    fim: true,
    verified: 'listed',
    kind: 'onnx',
  },
  {
    // Listing seen (onnx/ on main): model.onnx 654 MB, model_fp16 327 MB, model_q4 200 MB, model_q4f16 134 MB.
    // No int8 file in this repo. The ONNX files live in the official repo, not onnx-community.
    repo: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    revision: 'main',
    label: 'SmolLM2 135M Instruct (q4)',
    files: [...commonFiles(), { path: 'onnx/model_q4.onnx' }],
    approxBytes: 200 * MB + 3 * MB,
    license: 'Apache-2.0',
    description: 'Tiny and fast general model trained with a lot of code; StarCoder-style FIM tokens in its vocabulary. For slow machines.',
    fim: false,
    verified: 'listed',
    kind: 'onnx',
  },
  {
    // Listing seen (onnx/ on main): model.onnx + .onnx_data 5.39 GB, model_int8 / model_quantized 1.35 GB,
    // model_q4 1.07 GB, model_q4f16 853 MB, model_bnb4 985 MB.
    repo: 'onnx-community/deepseek-coder-1.3b-instruct-ONNX',
    revision: 'main',
    label: 'DeepSeek-Coder 1.3B Instruct (q4)',
    files: [...commonFiles(), { path: 'onnx/model_q4.onnx' }],
    approxBytes: 1070 * MB + 3 * MB,
    license: 'DeepSeek License (commercial use allowed, use-based restrictions)',
    description: 'Code model with DeepSeek FIM tokens; full multi-head KV cache (large memory per token). Instruct-tuned.',
    fim: true,
    verified: 'listed',
    kind: 'onnx',
  },
  {
    // UNVERIFIED file name: the repo's top level was seen (config.json, tokenizer.json, tokenizer_config.json,
    // generation_config.json, onnx/, 6.77 GB in all) but not its onnx/ listing. The same author's
    // deepseek-coder-1.3b-instruct export of the same date has decoder_model_merged.onnx(+_data) and
    // decoder_model_merged_quantized.onnx (1.36 GB), and the totals match, so we assume the same names here.
    repo: 'Xenova/deepseek-coder-1.3b-base',
    revision: 'main',
    label: 'DeepSeek-Coder 1.3B base (int8, merged decoder)',
    files: [...commonFiles(), { path: 'onnx/decoder_model_merged_quantized.onnx' }],
    approxBytes: 1360 * MB + 2 * MB,
    license: 'DeepSeek License (commercial use allowed, use-based restrictions)',
    description: 'Base code model trained for fill-in-the-middle; an older Optimum merged-decoder export (use_cache_branch).',
    fim: true,
    verified: 'unverified',
    kind: 'onnx',
  },
  // StarCoder2: offered as a checkpoint above. No ONNX export of a real StarCoder2 checkpoint was found (only Xenova/tiny-random-Starcoder2ForCausalLM,
  // random weights). Xenova/tiny_starcoder_py (164M, Python only) has old gpt_bigcode exports with a fused
  // `key_value` cache in its decoder_model_* files; users can still enter any repo id.
];

/**
 * Whether a catalog entry is an int8 export (Optimum's `model_quantized.onnx`, `model_int8.onnx`, ...), whose
 * matrix products have no WebGPU kernel (engine/model/gpuKernels.ts): on a GPU they still run on the CPU.
 */
export function hasCpuOnlyProducts(m: RecommendedModel): boolean {
  return m.kind === 'onnx' && m.files.some((f) => /(^|[/_])(quantized|u?int8)\.onnx$/.test(f.path));
}

export function findRecommended(repo: string): RecommendedModel | undefined {
  return RECOMMENDED_MODELS.find((m) => m.repo.toLowerCase() === repo.toLowerCase());
}

/** External data files of an ONNX file: `model.onnx_data`, `model.onnx_data_1`, `model.onnx.data`, ... */
export function externalDataFiles(onnxPath: string, all: readonly string[]): string[] {
  return all.filter((f) => f.startsWith(`${onnxPath}_data`) || f.startsWith(`${onnxPath}.data`)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/**
 * The files to fetch for our engine from a repo's file list: config/tokenizer files and one ONNX file
 * (with its external data). `preferOnnx` picks a given ONNX file instead. Undefined ONNX: the repo has none.
 */
export function pickModelFiles(all: readonly string[], preferOnnx?: string): { files: ModelFile[]; onnx?: string; missing: string[] } {
  const set = new Set(all);
  const missing = ['config.json', 'tokenizer.json'].filter((f) => !set.has(f));
  const files: ModelFile[] = [];
  for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) {
    if (set.has(f)) files.push({ path: f, optional: f === 'generation_config.json' });
  }
  const onnxFiles = all.filter((f) => f.endsWith('.onnx'));
  let onnx: string | undefined;
  if (preferOnnx) onnx = onnxFiles.find((f) => f === preferOnnx || f.endsWith(`/${preferOnnx}`));
  if (!onnx) {
    for (const name of ONNX_PREFERENCE) {
      onnx = onnxFiles.find((f) => f === `onnx/${name}`) ?? onnxFiles.find((f) => f === name);
      if (onnx) break;
    }
  }
  // Some other decoder export: anything that is not an encoder or a with-past-only half.
  onnx ??= onnxFiles.find((f) => !/encoder|with_past|vision|embed/i.test(f));
  if (onnx) {
    files.push({ path: onnx });
    for (const d of externalDataFiles(onnx, all)) files.push({ path: d });
  } else {
    missing.push('an .onnx file');
  }
  return { files, onnx, missing };
}

/** `owner/name` -> the folder name under `<storage>/models/`. */
export function modelFolderName(repo: string): string {
  return repo.replace('/', '--');
}
