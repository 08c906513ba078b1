// npm run bench:decode-vs-llama-server [-- --shapes 0.5b,1.5b] [--rounds 3] [--threads 2] [--llama-huge-pages]:
// issue 24's decode and prefill ratios. Ghostline's engine on the converter's q4 graph, in the worker process
// the editor and the CLI start (so with its environment: huge pages, host/hugePageMalloc.ts), against
// llama-server (llama.cpp built here by scripts/llama-server.js) on a Q4_0 GGUF of the same random-weight
// checkpoint (the same 4-bit codes): the same token ids, greedy, EOS ignored, prompt lookup off, 128 new
// tokens, rounds interleaved with the order alternating. Decode = (N - 1) / time after the first token for
// both (llama-server: its predicted_ms). llama-server runs as users start it, unless --llama-huge-pages gives
// it the same glibc huge-page tunable as Ghostline's worker. Writes bench/results/decode-vs-llama-server.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageRoot } from '../src/engine/host/defaultModel';
import { EngineClient } from '../src/engine/host/client';
import { withHugePageMalloc } from '../src/engine/host/hugePageMalloc';
import { loadPromptTokenizer } from '../src/servers/promptTokenizer';
import { syntheticPrompt } from './llamaCpp';
import { cpuFlags, flagValue } from './machine';
import { ensureConvertedShape, ensureQ4Gguf, shapesArg } from './qwenPath';
import { median, round } from './stats';

const NEW_TOKENS = 128;
const PROMPT_TOKENS = [128, 1200];

interface Side {
  decode_tokens_per_s: number[];
  prefill_tokens_per_s: number[];
}

interface LlamaServer {
  url: string;
  stop: () => Promise<void>;
}

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => flagValue(argv, name);
  const root = packageRoot(__dirname);
  const threads = Number(arg('threads') ?? 2);
  const llamaHugePages = argv.includes('--llama-huge-pages');
  const rounds = Number(arg('rounds') ?? 3);
  const shapes = shapesArg(arg('shapes'));
  const log = (s: string) => console.error(`[bench:decode-vs-llama-server ${new Date().toISOString().slice(11, 19)}] ${s}`);
  const { startLlamaServer } = require(path.join(root, 'scripts', 'llama-server.js')) as {
    startLlamaServer: (o: { model: string; contextSize: number; extraArgs: string[] }) => Promise<LlamaServer>;
  };
  const results: Record<string, unknown> = {};
  const workerHugePageBytes: Record<string, number | null> = {};
  // llama-server inherits this process's environment.
  if (llamaHugePages) Object.assign(process.env, withHugePageMalloc(process.env));
  for (const shape of shapes) {
    const { checkpoint, converted } = ensureConvertedShape(root, log, shape);
    const gguf = ensureQ4Gguf(root, checkpoint, log);
    log(`${shape}: llama-server on ${path.basename(gguf)}, Ghostline on ${path.basename(converted)}`);
    const server = await startLlamaServer({ model: gguf, contextSize: 4096, extraArgs: ['-t', String(threads), '-tb', String(threads)] });
    const engine = new EngineClient();
    await engine.load(converted, { threads });
    const tokenizer = loadPromptTokenizer(converted);
    workerHugePageBytes[shape] = (await engine.workerStats()).hugePageBytes;
    try {
      const byLength: Record<string, unknown> = {};
      for (const len of PROMPT_TOKENS) {
        const prompt = syntheticPrompt(tokenizer, len);
        const ids = await engine.tokenize(prompt);
        const ours: Side = { decode_tokens_per_s: [], prefill_tokens_per_s: [] };
        const theirs: Side = { decode_tokens_per_s: [], prefill_tokens_per_s: [] };
        const runOurs = async (keep: boolean) => {
          await engine.resetCache(); // cold, as llama-server's cache_prompt: false
          const r = await engine.generate(prompt, { maxNewTokens: NEW_TOKENS, ignoreEos: true, speculativeTokens: 0, temperature: 0 });
          if (!keep) return;
          ours.decode_tokens_per_s.push(((r.stats.generatedTokens - 1) / (r.stats.totalMs - r.stats.prefillMs)) * 1000);
          ours.prefill_tokens_per_s.push((ids.length / r.stats.prefillMs) * 1000);
        };
        const runTheirs = async (keep: boolean) => {
          const body = { prompt: ids, n_predict: NEW_TOKENS, ignore_eos: true, cache_prompt: false, temperature: 0, samplers: ['top_k'], top_k: 1 };
          const res = await fetch(`${server.url}/completion`, { method: 'POST', body: JSON.stringify(body) });
          const t = ((await res.json()) as { timings: { predicted_n: number; predicted_ms: number; prompt_per_second: number } }).timings;
          if (!keep) return;
          theirs.decode_tokens_per_s.push(((t.predicted_n - 1) / t.predicted_ms) * 1000);
          theirs.prefill_tokens_per_s.push(t.prompt_per_second);
        };
        await runOurs(false); // warm both
        await runTheirs(false);
        for (let r = 0; r < rounds; r++) {
          for (const run of r % 2 === 0 ? [runOurs, runTheirs] : [runTheirs, runOurs]) await run(true);
        }
        const decodeRatio = median(ours.decode_tokens_per_s) / median(theirs.decode_tokens_per_s);
        // The same ratio within each round (the two runs back to back): its spread is the comparison's noise.
        const roundRatios = ours.decode_tokens_per_s.map((x, i) => round(x / theirs.decode_tokens_per_s[i], 3));
        const prefillRatio = median(ours.prefill_tokens_per_s) / median(theirs.prefill_tokens_per_s);
        const fmt = (s: Side) => ({
          decode_tokens_per_s: s.decode_tokens_per_s.map((x) => round(x, 1)),
          prefill_tokens_per_s: s.prefill_tokens_per_s.map((x) => round(x, 1)),
        });
        byLength[String(len)] = {
          prompt_tokens: ids.length,
          ghostline: fmt(ours),
          llama_server: fmt(theirs),
          decode_ratio: round(decodeRatio, 3),
          decode_ratio_rounds: roundRatios,
          prefill_ratio: round(prefillRatio, 3),
        };
        log(`${shape} ${ids.length} prompt tokens: decode ${round(decodeRatio, 3)}x (rounds ${roundRatios.join(', ')}), prefill ${round(prefillRatio, 3)}x`);
      }
      results[shape] = byLength;
    } finally {
      await engine.dispose();
      await server.stop();
    }
  }
  const out = {
    command: `npm run bench:decode-vs-llama-server -- ${argv.join(' ')}`.trim(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, instruction_set: cpuFlags(), node: process.version, loadavg_at_end: os.loadavg() },
    threads,
    rounds,
    new_tokens: NEW_TOKENS,
    ghostline_worker_huge_page_bytes: workerHugePageBytes,
    llama_server_glibc_tunables: llamaHugePages ? (process.env.GLIBC_TUNABLES ?? null) : null,
    shapes: results,
  };
  const file = path.join(root, 'bench', 'results', 'decode-vs-llama-server.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out.shapes, null, 1));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
