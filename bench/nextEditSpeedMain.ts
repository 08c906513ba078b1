// `npm run bench:next-edit-speed [-- --shapes 0.5b,1.5b --threads T]`: how long a next edit takes on the shapes of
// Sweep's next-edit models (Qwen2.5-Coder 0.5B and 1.5B; random weights, converted to q4 as bench/qwenPath.ts
// makes them). A real prompt is built from a real file (bench/replay/completionService.ts.txt) with a rename as
// the user's edit, through the product's own predictNextEdit prompt builder; the answer is the window rewritten
// (its length in tokens, N). Random weights never copy, so two numbers bound the wait:
// - no copy (upper bound): the cold prefill, then N tokens decoded one by one (greedy, EOS ignored, no drafts);
// - copied (what a trained model does for most of the window): prompt lookup drafts D tokens from the window and
//   one forward pass verifies D + 1 (the logits of every one of them: the 151,936-column head runs D + 1 times).
//   Measured as that forward pass itself, on top of the cached prompt, for D = 8, 16, 32 and 64 (median of 5);
//   the time to the edit is the cold prefill plus ceil(N / (D + 1)) such passes. predictNextEdit's draft length
//   is chosen from this table.
// And the next request, after the user's following edit: how many prompt tokens the KV cache keeps. Writes
// bench/results/next-edit-speed.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EditHistory } from '../src/completion/nextEdit/editHistory';
import { nextEditPrompt } from '../src/completion/nextEdit/predictNextEdit';
import { packageRoot } from '../src/engine/host/defaultModel';
import { pickOnnxFile } from '../src/engine/model/modelFolder';
import { type AnyKvCache, OnnxCausalLM } from '../src/engine/model/onnxModel';
import { Engine } from '../src/engine/worker/engine';
import { ensureConvertedShape, shapesArg } from './qwenPath';
import { round } from './stats';

/** The draft length predictNextEdit uses (its `speculativeTokens`), and the others measured beside it. */
const DRAFT = 16;
const DRAFTS = [8, 16, 32, 64];

interface ShapeRow {
  shape: string;
  promptTokens: number;
  answerTokens: number;
  coldPrefillMs: number;
  decodeMsPerToken: number;
  verifyMs17: number;
  timeToEditNoCopyMs: number;
  timeToEditCopiedMs: number;
  /** Per draft length D: one verification pass (D + 1 tokens, D + 1 logits rows) and the time to the edit. */
  byDraft: { draft: number; verifyMs: number; timeToEditCopiedMs: number }[];
  nextRequest: { promptTokens: number; reusedTokens: number; prefillMs: number };
}

/** The file as the user has it after renaming one identifier at `line`; the rename as an edit. */
function renamed(text: string, from: string, to: string, nth: number): { text: string; offset: number } {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(from, at + 1);
  if (at < 0) throw new Error(`"${from}" not found`);
  return { text: text.slice(0, at) + to + text.slice(at + from.length), offset: at };
}

/** One verification pass per draft length, timed on the lean model itself: D + 1 window tokens, D + 1 logits rows. */
async function verifyPasses(
  dir: string,
  threads: number | undefined,
  promptIds: number[],
  windowIds: number[],
  answerTokens: number,
  coldPrefillMs: number,
): Promise<ShapeRow['byDraft']> {
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const model = await OnnxCausalLM.load(pickOnnxFile(dir), config, { threads });
  try {
    let cache: AnyKvCache = model.emptyCache();
    for (let at = 0; at < promptIds.length; at += 256) cache = (await model.forward([promptIds.slice(at, at + 256)], cache)).cache;
    const out: ShapeRow['byDraft'] = [];
    for (const draft of DRAFTS) {
      const times: number[] = [];
      for (let i = 0; i < 6; i++) {
        const base = cache.crop(promptIds.length);
        const t0 = performance.now();
        await model.forward([windowIds.slice(0, draft + 1)], base, draft + 1);
        if (i > 0) times.push(performance.now() - t0); // the first pass of a new length warms its shapes
      }
      const verifyMs = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
      out.push({ draft, verifyMs: round(verifyMs, 1), timeToEditCopiedMs: round(coldPrefillMs + Math.ceil(answerTokens / (draft + 1)) * verifyMs, 0) });
    }
    return out;
  } finally {
    await model.release();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const root = packageRoot(__dirname);
  const threads = arg('threads') ? Number(arg('threads')) : undefined;
  const log = (s: string) => console.error(`[bench:next-edit-speed] ${s}`);
  const file = 'src/completion/completionService.ts';
  const original = fs.readFileSync(path.join(root, 'bench', 'replay', 'completionService.ts.txt'), 'utf8');
  // The user renames a local identifier used a few lines further down (the model's job is the next use).
  const name = 'inflight';
  const first = renamed(original, name, 'pending', 2);
  const history = new EditHistory();
  history.record({
    path: file,
    offset: first.offset,
    removedLength: name.length,
    removedText: name,
    insertedText: 'pending',
    atMs: 0,
    documentTextAfter: first.text,
  });
  const req = { path: file, documentText: first.text, cursorOffset: first.offset + 'pending'.length, history };
  const built = nextEditPrompt(req);
  if ('reason' in built) throw new Error(`no prompt: ${built.reason}`);
  // The user's following edit (the next use renamed), as the next request sees it.
  const second = renamed(first.text, name, 'pending', 2);
  history.record({
    path: file,
    offset: second.offset,
    removedLength: name.length,
    removedText: name,
    insertedText: 'pending',
    atMs: 5000,
    documentTextAfter: second.text,
  });
  const next = nextEditPrompt({ ...req, documentText: second.text, cursorOffset: second.offset + 'pending'.length });
  if ('reason' in next) throw new Error(`no second prompt: ${next.reason}`);

  const rows: ShapeRow[] = [];
  for (const shape of shapesArg(arg('shapes'))) {
    const { converted } = ensureConvertedShape(root, log, shape);
    const engine = await Engine.load(converted, { threads, device: 'cpu' });
    let disposed = false;
    try {
      const answerTokens = engine.tokenizer.encode(built.window.text).length + 1;
      // Drafting off: random weights reject every draft, and a rejected draft costs a 17-token pass per token.
      const cold = await engine.generate(built.prompt, {
        temperature: 0,
        maxNewTokens: answerTokens,
        ignoreEos: true,
        speculativeTokens: 0,
        stop: [],
        maxLines: 0,
        stopOnLoop: false,
      });
      await engine.generate(built.prompt, { temperature: 0, maxNewTokens: 1 });
      const again = await engine.generate(next.prompt, { temperature: 0, maxNewTokens: 1 });
      const decodeMsPerToken = cold.stats.decodeMs / Math.max(1, cold.stats.generatedTokens);
      const promptIds = engine.tokenize(built.prompt);
      const windowIds = engine.tokenizer.encode(built.window.text);
      await engine.dispose(); // one copy of the weights in memory at a time
      disposed = true;
      const byDraft = await verifyPasses(converted, threads, promptIds, windowIds, answerTokens, cold.stats.prefillMs);
      const verifyMs = byDraft.find((d) => d.draft === DRAFT)!.verifyMs;
      rows.push({
        shape,
        promptTokens: cold.stats.promptTokens,
        answerTokens,
        coldPrefillMs: round(cold.stats.prefillMs, 0),
        decodeMsPerToken: round(decodeMsPerToken, 1),
        verifyMs17: round(verifyMs, 1),
        timeToEditNoCopyMs: round(cold.stats.prefillMs + cold.stats.decodeMs, 0),
        timeToEditCopiedMs: round(cold.stats.prefillMs + Math.ceil(answerTokens / (DRAFT + 1)) * verifyMs, 0),
        byDraft,
        nextRequest: { promptTokens: again.stats.promptTokens, reusedTokens: again.stats.reusedTokens, prefillMs: round(again.stats.prefillMs, 0) },
      });
      log(`${shape}: ${JSON.stringify(rows.at(-1))}`);
    } finally {
      if (!disposed) await engine.dispose();
    }
  }
  const out = {
    command: `npm run bench:next-edit-speed -- ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown' },
    window: { lines: built.window.endLine - built.window.startLine + 1, chars: built.window.text.length },
    rows,
  };
  fs.writeFileSync(path.join(root, 'bench', 'results', 'next-edit-speed.json'), `${JSON.stringify(out, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(`bench:next-edit-speed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
