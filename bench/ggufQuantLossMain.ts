// npm run eval:gguf-quant-loss
// What a GGUF file's own quantization costs once Ghostline converts it again: the default model as llama.cpp
// quantizes it (its F32 GGUF from tools/model/export_gguf.py, then llama.cpp's own `llama-quantize` into the formats
// the hub's GGUF repos carry), each converted by `ghostline convert` to q4 and to int8, against the same model
// converted from its safetensors. Scored as eval:quant-loss scores: mean negative log-likelihood per token of the
// held-out files, in windows of the model's context. Needs the llama-server tier's build (cmake, g++; once).
// Writes bench/results/gguf-quant-loss.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { convertCheckpoint } from '../src/converter/convert';
import type { Quant } from '../src/converter/types';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { heldOutWindows, meanNll } from './quantLoss';
import { round } from './stats';

/** llama-quantize's names of the formats measured (what the hub's GGUF repos mostly offer). */
const FORMATS = ['Q8_0', 'Q6_K', 'Q5_K_M', 'Q4_K_M', 'Q4_0'];
const QUANTS: Quant[] = ['q4', 'int8'];

interface Row {
  source: string;
  quant: Quant;
  nll: number;
  deltaVsFp32: number;
  bytes: number;
}

async function main(): Promise<void> {
  const root = packageRoot(__dirname);
  const llama = require(path.join(root, 'scripts', 'llama-server.js')) as { ensureGguf: () => string; ensureQuantize: () => string };
  const modelDir = defaultModelDir(root);
  const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
  const { windows } = heldOutWindows(modelDir);
  const f32 = llama.ensureGguf();
  const quantize = llama.ensureQuantize();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-gguf-quant-loss-'));
  const rows: Row[] = [];
  const score = async (source: string, from: string, quant: Quant) => {
    const conv = await convertCheckpoint({ from, out: path.join(work, `${source}-${quant}`), quant });
    const { nll } = await meanNll(conv.onnxFile, config, windows);
    rows.push({ source, quant, nll: round(nll, 5), deltaVsFp32: 0, bytes: conv.bytes });
    console.error(`[eval:gguf-quant-loss] ${source} -> ${quant}: ${nll.toFixed(5)} nats/token`);
  };
  try {
    await score('safetensors', modelDir, 'fp32');
    for (const q of QUANTS) await score('safetensors', modelDir, q);
    for (const format of FORMATS) {
      // The model's own tokenizer beside the file: its pre-tokenizer has no llama.cpp preset.
      const dir = path.join(work, `gguf-${format}`);
      fs.mkdirSync(dir);
      const r = spawnSync(quantize, [f32, path.join(dir, `model-${format}.gguf`), format, '2'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`llama-quantize ${format}: ${r.stderr.slice(-1000)}`);
      for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(modelDir, f), path.join(dir, f));
      for (const q of QUANTS) await score(`GGUF ${format}`, dir, q);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const fp32 = rows[0].nll;
  for (const r of rows) r.deltaVsFp32 = round(r.nll - fp32, 5);
  const out = {
    command: 'npm run eval:gguf-quant-loss',
    date: new Date().toISOString(),
    model: path.basename(modelDir),
    tokens: windows.reduce((n, w) => n + w.length - 1, 0),
    rows,
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'gguf-quant-loss.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out, null, 2));
}

main().catch((err: unknown) => {
  console.error(`eval:gguf-quant-loss: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
