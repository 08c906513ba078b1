/**
 * The served default model's tokenizer against @huggingface/tokenizers (issue 27), on a few hundred real
 * snippets: the held-out and external eval sets (tools/model/eval/) and Debian's Python standard library.
 * llama.cpp has no pre-tokenizer preset for the default model's regex (it keeps `_` in words; see
 * tools/model/export_gguf.py), so /tokenize splits text differently: measured here, not hidden. What makes the
 * served model exact is that its vocabulary is the model's, which /detokenize of the local ids proves for
 * every snippet: the ids Ghostline sends mean what they mean locally. And the connect-time check says so.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { checkServerTokenizer } from '../../src/servers/tokenizerCheck';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { ROOT } from '../helpers';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: () => Promise<{ url: string; stop: () => Promise<void> }>;
};

const MODEL = defaultModelDir(ROOT);
const tok = loadPromptTokenizer(MODEL);
let server: { url: string; stop: () => Promise<void> };
before(async () => {
  server = await startLlamaServer();
});
after(async () => server?.stop());

/** Snippets of up to 600 characters: each eval example's prefix end and suffix start, and stdlib files' heads. */
function snippets(): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  for (const set of ['heldout', 'external']) {
    const lines = fs
      .readFileSync(path.join(ROOT, 'tools', 'model', 'eval', `${set}.jsonl`), 'utf8')
      .trim()
      .split('\n');
    lines.forEach((line, i) => {
      if (i % 4 !== 0) return; // 200 examples of 793
      const ex = JSON.parse(line) as { path: string; prefix: string; suffix: string };
      if (ex.prefix.length > 20) out.push({ name: `${set} ${ex.path} prefix`, text: ex.prefix.slice(-600) });
      if (ex.suffix.length > 20) out.push({ name: `${set} ${ex.path} suffix`, text: ex.suffix.slice(0, 600) });
    });
  }
  const stdlib = fs.existsSync('/usr/lib/python3.11') ? '/usr/lib/python3.11' : null;
  if (stdlib) {
    const files = fs
      .readdirSync(stdlib)
      .filter((f) => f.endsWith('.py'))
      .sort()
      .slice(0, 100);
    for (const f of files) out.push({ name: `stdlib ${f}`, text: fs.readFileSync(path.join(stdlib, f), 'utf8').slice(0, 600) });
  }
  return out;
}

async function post(route: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${server.url}${route}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  assert.equal(r.status, 200, `${route} answered ${r.status}`);
  return (await r.json()) as Record<string, unknown>;
}

test("the served GGUF has the model's vocabulary (every snippet's local ids detokenize to it); its own splitting is measured", async (t) => {
  const all = snippets();
  assert.ok(all.length >= 300, `${all.length} snippets`);
  let split = 0;
  let localTokens = 0;
  let serverTokens = 0;
  const wrong: string[] = [];
  for (const s of all) {
    const ids = tok.encodeLiteral(s.text);
    const served = (await post('/tokenize', { content: s.text, add_special: false, parse_special: false })).tokens as number[];
    const back = (await post('/detokenize', { tokens: ids })).content;
    if (back !== s.text) wrong.push(`${s.name}: ${JSON.stringify(String(back).slice(0, 80))}`);
    if (served.length !== ids.length || served.some((id, i) => id !== ids[i])) split++;
    localTokens += ids.length;
    serverTokens += served.length;
  }
  t.diagnostic(
    `${all.length} snippets: llama-server's /tokenize splits ${split} differently from @huggingface/tokenizers ` +
      `(${serverTokens} tokens against ${localTokens}, +${(((serverTokens - localTokens) / localTokens) * 100).toFixed(1)}%); /detokenize of the local ids gives back ${all.length - wrong.length}`,
  );
  assert.deepEqual(wrong, [], 'the served vocabulary renders the local ids as other text');
  // The export writes a preset, not the model's regex: when a future llama.cpp or export matches, this says so.
  assert.ok(split > 0, 'llama-server now splits text as the model does: text prompts are exact, the ids are no longer needed');
});

test('the connect-time check against the real server: ids, for /completion and /v1/completions', async () => {
  for (const kind of ['llama.cpp', 'openai'] as const) {
    const r = await checkServerTokenizer({ kind, url: server.url, model: 'default', timeoutMs: 10_000 }, tok, 'ghostline-code-small', [
      '<fim_prefix>',
      '<fim_suffix>',
      '<fim_middle>',
    ]);
    assert.equal(r.verdict, 'ids', r.message);
    assert.ok(r.serverTokens! > r.localTokens!, r.message);
  }
});
