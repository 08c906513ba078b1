// node out/bench/serverClientOverheadMain.js [--requests N]: what the client alone adds to a server request.
// A local stub answers /infill at once (three streamed tokens, then timings of 0 ms), so the latency of a
// completion through the editor's pipeline (CompletionService -> ServerGenerator -> the extension's undici
// transport -> loopback HTTP) is all client and HTTP cost, with no model and no server compute competing
// for the cores. Each request is at a new cursor position (no cache hit, no in-flight reuse). Reports
// median and p95, and the share spent inside ServerGenerator.generate. Writes bench/results/server-client.json.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { serverFetch } from '../src/net/httpTransport';
import { ServerGenerator } from '../src/servers/serverGenerator';
import { CompletionService } from '../src/completion/completionService';
import { textSource } from '../src/completion/context/documentContext';
import type { BackendHooks, Generator } from '../src/completion/generator';
import { defaultCompletionSettings } from '../src/completion/settings';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import type { DecodeOptions } from '../src/engine/shared/decodeOptions';
import { packageRoot } from '../src/engine/host/defaultModel';
import type { Prompt } from '../src/engine/shared/prompt';
import { median, percentile, round } from './stats';

const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

async function main() {
  const argv = process.argv.slice(2);
  const n = Number(argv.includes('--requests') ? argv[argv.indexOf('--requests') + 1] : 400);
  const root = packageRoot(__dirname);
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const t of ['return ', 'value', ';']) res.write(sse({ content: t, stop: false, completion_probabilities: [{ token: t, logprob: -0.1 }] }));
      res.end(sse({ content: '', stop: true, stop_type: 'eos', timings: { prompt_n: 40, cache_n: 400, predicted_n: 3, prompt_ms: 0, predicted_ms: 0 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const pool = serverFetch({ env: {} });
  // --global-fetch: Node's own fetch instead of the extension's transport, for comparison.
  const inner = new ServerGenerator({ kind: 'llama.cpp', url, timeoutMs: 5000, fetch: argv.includes('--global-fetch') ? undefined : pool });
  let insideMs = 0;
  const timed: Generator = {
    async generate(prompt: Prompt, options: Partial<DecodeOptions>, hooks?: BackendHooks) {
      const t0 = performance.now();
      try {
        return await inner.generate(prompt, options, hooks);
      } finally {
        insideMs += performance.now() - t0;
      }
    },
  };
  const settings = { ...defaultCompletionSettings(), prefetch: false };
  // As in the editor: the syntax check runs on each suggestion.
  const svc = new CompletionService(
    timed,
    () => null,
    () => settings,
    () => ({ contextTokens: 8192 }),
    new SyntaxRefiner({ log: () => undefined }),
  );
  const lines = fs.readFileSync(path.join(root, 'src', 'completion', 'completionService.ts'), 'utf8').split('\n');
  const lat: number[] = [];
  const inside: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const line = 40 + (i % (lines.length - 80));
    const doc = textSource(lines.join('\n'));
    const before = insideMs;
    const t0 = performance.now();
    await svc.complete({
      doc,
      cursor: { line, character: Math.min(lines[line].length, 1 + (i % 7)) },
      languageId: 'typescript',
      path: `f${i}.ts`,
      explicit: false,
    });
    // The first 20 warm the JIT, the connection and the grammar.
    if (i >= 20) {
      lat.push(performance.now() - t0);
      inside.push(insideMs - before);
    }
  }
  await pool.close();
  server.close();
  const report = {
    date: new Date().toISOString(),
    requests: n,
    median_ms: round(median(lat)),
    p95_ms: round(percentile(lat, 95)),
    in_server_generator_median_ms: round(median(inside)),
    pipeline_median_ms: round(median(lat.map((l, i) => l - inside[i]))),
  };
  fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench', 'results', 'server-client.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
