// npm run bench:server (or npm run bench -- --server) [-- --keystrokes N] [--parallel SLOTS]: several editors typing at once against one
// llama.cpp server (issue 13). A real llama-server (scripts/llama-server.js: built once from node-llama-cpp's
// llama.cpp source, the default model as GGUF) runs with -np SLOTS (default 4); 1, 4 and 16 simulated editors
// each type a stretch of a real source file at a human rhythm through the editor's pipeline
// (CompletionService -> ServerGenerator, llama.cpp /infill), every keystroke cancelling the previous request.
// Reported per editor count: p50/p95 latency of completed requests, the client's overhead over the server's
// own timings, generated tokens/s, how busy the slots were (GET /slots every 50 ms), and after the storm
// whether every slot is idle and how many TCP connections to the server are still open.
// Writes bench/results/server.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { serverFetch } from '../src/net/httpTransport';
import { ServerGenerator } from '../src/servers/serverGenerator';
import { CompletionService } from '../src/completion/completionService';
import type { CompletionOutcome } from '../src/completion/types';
import { textSource } from '../src/completion/context/documentContext';
import { fimTemplateForFamily } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { packageRoot } from '../src/engine/host/defaultModel';
import { median, percentile, round } from './stats';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One editor: types `chars` characters of `file` from a third of the way in, as a person would. */
async function editor(service: CompletionService, file: string, chars: number, seed: number, out: CompletionOutcome[]): Promise<number> {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const start = Math.floor(lines.length / 3) + seed * 7;
  const typed: string[] = [];
  for (let n = 0, i = start; i < lines.length && n < chars; i++) {
    typed.push(lines[i]);
    n += lines[i].length + 1;
  }
  const before = lines.slice(0, start);
  const after = lines.slice(start + typed.length);
  let current: AbortController | null = null;
  let keystrokes = 0;
  const pending: Promise<void>[] = [];
  for (let li = 0; li < typed.length && keystrokes < chars; li++) {
    for (let c = 1; c <= typed[li].length && keystrokes < chars; c++) {
      current?.abort();
      const ac = new AbortController();
      current = ac;
      keystrokes++;
      const doc = textSource([...before, ...typed.slice(0, li), typed[li].slice(0, c), ...after].join('\n'));
      const p = service
        .complete({ doc, cursor: { line: before.length + li, character: c }, languageId: 'typescript', path: `${file}#${seed}`, explicit: false }, ac.signal)
        .then((o) => void out.push(o))
        .catch(() => undefined);
      pending.push(p);
      const pause = c === typed[li].length;
      if (pause) await Promise.race([p, sleep(1500)]);
      else await sleep(120 * (0.6 + 0.8 * (((keystrokes * 2654435761 + seed) >>> 0) / 2 ** 32)));
    }
  }
  current?.abort();
  await Promise.all(pending);
  return keystrokes;
}

/** Established TCP connections to a local port (from /proc/net/tcp: state 01). */
function openConnections(port: number): number {
  try {
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    return fs
      .readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .filter((l) => {
        const f = l.trim().split(/\s+/);
        return f.length > 3 && f[2]?.endsWith(`:${hex}`) && f[3] === '01';
      }).length;
  } catch {
    return -1;
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const arg = (n: string) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : undefined);
  const root = packageRoot(__dirname);
  const totalKeystrokes = Number(arg('keystrokes') ?? 1000);
  const slots = Number(arg('parallel') ?? 4);
  const { startLlamaServer } = require(path.join(root, 'scripts', 'llama-server.js')) as {
    startLlamaServer: (o: { parallel: number }) => Promise<{ url: string; stop: () => Promise<void> }>;
  };
  const server = await startLlamaServer({ parallel: slots });
  const port = Number(new URL(server.url).port);
  const files = [path.join(root, 'src', 'completion', 'completionService.ts'), path.join(root, 'src', 'engine', 'worker', 'engine.ts')];
  const results: Record<string, unknown>[] = [];
  try {
    for (const editors of [1, 4, 16]) {
      const settings = { ...defaultCompletionSettings(), prefetch: false };
      const outcomes: CompletionOutcome[] = [];
      let busySamples = 0;
      let samples = 0;
      let polling = true;
      // The bench's own /slots polls get their own pool, so the connection count below can tell them apart.
      const monitor = serverFetch({ env: {} });
      const poller = (async () => {
        while (polling) {
          try {
            const s = (await (await monitor(`${server.url}/slots`)).json()) as { is_processing?: boolean }[];
            busySamples += s.filter((x) => x.is_processing).length;
            samples += s.length;
          } catch {
            // the poll itself failing says nothing about the slots
          }
          await sleep(50);
        }
      })();
      const t0 = performance.now();
      // Each editor has its own connection pool, as each VS Code window has (the extension's transport).
      const pools = Array.from({ length: editors }, () => serverFetch({ env: {} }));
      const typed = await Promise.all(
        Array.from({ length: editors }, (_, i) => {
          const gen = new ServerGenerator({ kind: 'llama.cpp', url: server.url, timeoutMs: 20_000, fetch: pools[i] });
          const svc = new CompletionService(
            gen,
            () => fimTemplateForFamily('starcoder'),
            () => settings,
            () => ({ contextTokens: 512 }),
          );
          return editor(svc, files[i % files.length], Math.ceil(totalKeystrokes / editors), i, outcomes);
        }),
      );
      const wallS = (performance.now() - t0) / 1000;
      polling = false;
      await poller;
      await sleep(1000);
      const after = (await (await monitor(`${server.url}/slots`)).json()) as { is_processing?: boolean }[];
      const done = outcomes.filter((o) => !o.cancelled && o.source === 'model' && o.stats);
      const lat = done.map((o) => o.latencyMs);
      const overhead = done.map((o) => o.latencyMs - (o.stats!.prefillMs + o.stats!.decodeMs));
      const tokens = outcomes.reduce((s, o) => s + (o.stats?.generatedTokens ?? 0), 0);
      const row = {
        editors,
        keystrokes: typed.reduce((a, b) => a + b, 0),
        completed_by_model: done.length,
        cancelled: outcomes.filter((o) => o.cancelled).length,
        p50_ms: round(percentile(lat, 50)),
        p95_ms: round(percentile(lat, 95)),
        client_overhead_ms_median: round(median(overhead)),
        generated_tokens_per_s: round(tokens / wallS, 1),
        slot_busy_fraction: samples ? round(busySamples / samples, 3) : null,
        busy_slots_after: after.filter((s) => s.is_processing).length,
        open_connections_after: openConnections(port),
        // The editors' pools and the bench's own /slots connection closed: anything still open leaked.
        open_connections_after_close: await Promise.all([...pools, monitor].map((p) => p.close())).then(async () => {
          await sleep(200);
          return openConnections(port);
        }),
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    await server.stop();
  }
  const p95 = (n: number) => (results.find((r) => r.editors === n)?.p95_ms as number) ?? NaN;
  const report = { date: new Date().toISOString(), slots, keystrokes_per_storm: totalKeystrokes, results, p95_16_over_1: round(p95(16) / p95(1), 2) };
  fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench', 'results', 'server.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `\n| editors | keystrokes | p50 ms | p95 ms | client overhead ms | tokens/s | slots busy | busy after | connections after |\n|---|---|---|---|---|---|---|---|---|`,
  );
  for (const r of results)
    console.log(
      `| ${r.editors} | ${r.keystrokes} | ${r.p50_ms} | ${r.p95_ms} | ${r.client_overhead_ms_median} | ${r.generated_tokens_per_s} | ${r.slot_busy_fraction} | ${r.busy_slots_after} | ${r.open_connections_after} |`,
    );
  console.log(`p95 at 16 editors / p95 at 1: ${report.p95_16_over_1}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
