/**
 * Team server parity (issue 27): the default model gives the same suggestions locally and through a real
 * llama-server. Same weights both sides: the default model's model.safetensors, converted by `ghostline convert
 * --quant fp32` for the local engine (in-process) and exported as an F32 GGUF for the server (float32 KV cache,
 * no flash attention). Same positions of held-out code (tools/model/eval/heldout.jsonl), same FIM prompt, greedy:
 * - through /completion and /v1/completions with the prompt as the local tokenizer's ids, every suggestion
 *   must equal the local one, and each token's log-probability and the gate's confidence must agree within
 *   the tolerances below (measured: 40/40 equal, |dlogprob| <= 5e-5, |dconfidence| < 1e-5);
 * - text prompts (/v1/completions) and /infill's own layout are measured, not gated: the server's
 *   pre-tokenizer is not the model's, so they read other token sequences (0/40 equal).
 * What may differ and why:
 * - the local engine heals the prompt's last token (a server cannot: it would need our tokenizer's prefix
 *   index), so healing is off here; with it on, a prompt that ends mid-word or in indentation differs;
 * - quantized weights: the shipped int8 ONNX and a Q8_0 GGUF hold the same codes, but onnxruntime (MatMulNBits,
 *   accuracy level 4) and ggml quantize the activations their own ways: PARITY_QUANT=int8 runs that pair
 *   (measured 29/40 equal suggestions, |dlogprob| up to 0.14, |dconfidence| up to 0.002); so the exact gate
 *   uses float32 weights, and the quantized pair is reported, not gated.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { loadPromptTokenizer, type PromptTokenizer } from '../../src/servers/promptTokenizer';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import type { ServerKind } from '../../src/servers/protocols';
import { confidence } from '../../src/completion/gate/calibration';
import { convertCheckpoint } from '../../src/converter/convert';
import { gateFeatures } from '../../src/completion/gate/features';
import { readCalibration } from '../../src/completion/gate/readCalibration';
import { type FimTemplate, pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import type { DecodeOptions } from '../../src/engine/shared/decodeOptions';
import type { PromptPart } from '../../src/engine/shared/prompt';
import type { GenerateResult } from '../../src/engine/shared/types';
import { Engine } from '../../src/engine/worker/engine';
import { ROOT } from '../helpers';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: (o?: { parallel?: number; weights?: 'f32' | 'q8_0'; extraArgs?: string[] }) => Promise<{ url: string; stop: () => Promise<void> }>;
};

/** Positions compared: the first ones of the held-out set (code the model never saw). */
const POSITIONS = Number(process.env.PARITY_POSITIONS ?? 40);
/** Per-token log-probability: measured max |local - server| 5e-5 (float32 summation order); 20x margin. */
const LOGPROB_TOLERANCE = 1e-3;
/** The gate's confidence (P(kept), 0..1): measured max difference below 1e-5. */
const CONFIDENCE_TOLERANCE = 1e-3;

const MODEL = defaultModelDir(ROOT);
/** PARITY_QUANT=int8: the shipped int8 ONNX against a Q8_0 GGUF (measured, see above), instead of float32 both sides. */
const QUANTIZED = process.env.PARITY_QUANT === 'int8';
let scratch = '';
let server: { url: string; stop: () => Promise<void> };
let engine: Engine;
let tok: PromptTokenizer;
let template: FimTemplate;
const calibration = readCalibration(MODEL).calibration;

before(async () => {
  // A float32 KV cache and no flash attention, as the local engine computes attention (llama-server's default
  // f16 cache rounds every key and value).
  server = await startLlamaServer({
    weights: QUANTIZED ? 'q8_0' : 'f32',
    extraArgs: (process.env.PARITY_ARGS ?? '-ctk f32 -ctv f32 -fa off').split(' ').filter(Boolean),
  });
  let local = MODEL;
  if (!QUANTIZED) {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-parity-'));
    local = path.join(scratch, 'fp32');
    await convertCheckpoint({ from: MODEL, out: local, quant: 'fp32' });
  }
  engine = await Engine.load(local, { threads: 2 });
  tok = loadPromptTokenizer(MODEL);
  template = pickFimTemplate(Object.fromEntries(tok.addedTokens))!;
});
after(async () => {
  await engine?.dispose();
  await server?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

interface Position {
  name: string;
  language: string;
  prompt: PromptPart[];
  linePrefix: string;
  lineSuffix: string;
  lineAbove: string;
}

/** A held-out example's prompt: the end of its prefix and the start of its suffix, within the 512-token context. */
function positions(): Position[] {
  const lines = fs
    .readFileSync(path.join(ROOT, 'tools', 'model', 'eval', 'heldout.jsonl'), 'utf8')
    .trim()
    .split('\n');
  return lines.slice(0, POSITIONS).map((line, i) => {
    const ex = JSON.parse(line) as { path: string; language: string; prefix: string; suffix: string };
    let prefix = ex.prefix.slice(-700);
    let suffix = ex.suffix.slice(0, 200);
    // Whole lines where the cut is not the cursor's.
    if (prefix.length < ex.prefix.length && prefix.includes('\n')) prefix = prefix.slice(prefix.indexOf('\n') + 1);
    if (suffix.length < ex.suffix.length && suffix.includes('\n')) suffix = suffix.slice(0, suffix.lastIndexOf('\n') + 1);
    while (tok.encodePrompt(template.fim(prefix, suffix)).length > 400) prefix = prefix.slice(prefix.indexOf('\n') + 1 || 50);
    const above = prefix.split('\n').slice(0, -1);
    return {
      name: `#${i} ${ex.path}`,
      language: ex.language,
      prompt: template.fim(prefix, suffix),
      linePrefix: prefix.slice(prefix.lastIndexOf('\n') + 1),
      lineSuffix: suffix.split('\n')[0],
      lineAbove: [...above].reverse().find((l) => l.trim() !== '') ?? '',
    };
  });
}

const GREEDY: Partial<DecodeOptions> = {
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repetitionPenalty: 1,
  maxNewTokens: 24,
  maxLines: 0,
  stop: [],
  tokenHealing: false,
};

function gate(p: Position, r: GenerateResult): number {
  const x = gateFeatures({
    text: r.text,
    raw: r.text,
    tokenLogprobs: r.tokenLogprobs ?? [],
    tokenTextEnds: r.tokenTextEnds ?? [],
    linePrefix: p.linePrefix,
    lineSuffix: p.lineSuffix,
    lineAbove: p.lineAbove,
    languageId: p.language,
  });
  return confidence(calibration, x);
}

interface Compared {
  differ: string[];
  maxLogprob: number;
  maxConfidence: number;
}

async function compare(kind: ServerKind, mode: 'ids' | 'text' | 'infill'): Promise<Compared> {
  const gen = new ServerGenerator({ kind, url: server.url, model: 'default', timeoutMs: 60_000 }, mode === 'ids' ? { tokenIds: tok } : {});
  const out: Compared = { differ: [], maxLogprob: 0, maxConfidence: 0 };
  for (const p of positions()) {
    const local = await engine.generate(p.prompt, GREEDY);
    const text = p.prompt.map((x) => ('text' in x ? x.text : ''));
    const infill =
      mode === 'infill' ? { prefix: text[1].slice(0, text[1].length - p.linePrefix.length), middle: p.linePrefix, suffix: text[3], extra: [] } : undefined;
    const remote = await gen.generate(p.prompt, { ...GREEDY, stop: template.stopTokens }, { infill });
    if (remote.text !== local.text) {
      out.differ.push(`${p.name}\n    local:  ${JSON.stringify(local.text)}\n    server: ${JSON.stringify(remote.text)}`);
      continue;
    }
    const a = local.tokenLogprobs ?? [];
    const b = remote.tokenLogprobs ?? [];
    if (a.length !== b.length) out.differ.push(`${p.name}: ${a.length} local log-probabilities against ${b.length} from the server`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) out.maxLogprob = Math.max(out.maxLogprob, Math.abs(a[i] - b[i]));
    out.maxConfidence = Math.max(out.maxConfidence, Math.abs(gate(p, local) - gate(p, remote)));
  }
  return out;
}

for (const kind of ['llama.cpp', 'openai'] as const) {
  const route = kind === 'llama.cpp' ? '/completion' : '/v1/completions';
  test(`${route} with the local tokenizer's ids: the local engine's suggestions, log-probabilities and confidence (${POSITIONS} held-out positions, greedy)`, async (t) => {
    const r = await compare(kind, 'ids');
    t.diagnostic(
      `${route} ids: ${POSITIONS - r.differ.length}/${POSITIONS} equal; max |dlogprob| ${r.maxLogprob.toFixed(5)}, max |dconfidence| ${r.maxConfidence.toFixed(5)}`,
    );
    if (QUANTIZED) return; // reported, not gated (see the header)
    assert.deepEqual(r.differ, [], `suggestions that differ:\n${r.differ.join('\n')}`);
    assert.ok(r.maxLogprob <= LOGPROB_TOLERANCE, `log-probabilities differ by up to ${r.maxLogprob}`);
    assert.ok(r.maxConfidence <= CONFIDENCE_TOLERANCE, `the gate's confidence differs by up to ${r.maxConfidence}`);
  });
}

test('measured, not gated: text prompts (the server tokenizes them its own way) and /infill (its own layout)', async (t) => {
  for (const [kind, mode] of [
    ['openai', 'text'],
    ['llama.cpp', 'infill'],
  ] as const) {
    const r = await compare(kind, mode);
    t.diagnostic(`${kind} ${mode}: ${POSITIONS - r.differ.length}/${POSITIONS} suggestions equal the local engine's`);
  }
});
