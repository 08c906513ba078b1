/**
 * Connecting to a real llama-server (scripts/llama-server.js) with an API key: /props gives the per-slot
 * context the prompt must fit, /v1/models the served name, a missing key is one clear message, and the FIM
 * probe tells the served model's markers from another family's.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { fimTemplateForFamily, pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { connectServer } from '../../src/servers/connectServer';
import { probeFimMarkers } from '../../src/servers/fimProbe';
import { probeServer } from '../../src/servers/probeServer';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { ROOT } from '../helpers';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: (o?: { parallel?: number; extraArgs?: string[] }) => Promise<{ url: string; stop: () => Promise<void> }>;
};

let server: { url: string; stop: () => Promise<void> };
before(async () => {
  server = await startLlamaServer({ parallel: 2, extraArgs: ['--api-key', 'k-123', '--alias', 'team-model'] });
});
after(async () => server?.stop());

test('llama.cpp: /props gives the context of one slot (-c divided among -np slots)', async () => {
  const r = await probeServer({ kind: 'llama.cpp', url: server.url, apiKey: 'k-123', timeoutMs: 5000 });
  assert.equal(r.contextTokens, 512, 'startLlamaServer gives each slot 512 tokens');
});

test('openai: /v1/models on llama-server lists the alias; another name is refused with what it serves', async () => {
  const r = await probeServer({ kind: 'openai', url: server.url, model: 'team-model', apiKey: 'k-123', timeoutMs: 5000 });
  assert.ok(r.models.includes('team-model'), r.models.join(','));
  await assert.rejects(probeServer({ kind: 'openai', url: server.url, model: 'other', apiKey: 'k-123', timeoutMs: 5000 }), /it serves "team-model"/);
});

test('no key or a wrong key: the server refuses it, and the message says how to set one', async () => {
  await assert.rejects(probeServer({ kind: 'llama.cpp', url: server.url, timeoutMs: 5000 }), /401.*refused the API key.*Set Server Key/);
  await assert.rejects(probeServer({ kind: 'llama.cpp', url: server.url, apiKey: 'wrong', timeoutMs: 5000 }), /401/);
});

test("FIM probe: the served default model has its own family's markers as tokens, and not another family's", async () => {
  const o = { kind: 'openai' as const, url: `${server.url}/v1`, model: 'team-model', apiKey: 'k-123', timeoutMs: 5000 };
  const own = pickFimTemplate(Object.fromEntries(loadPromptTokenizer(defaultModelDir(ROOT)).addedTokens));
  assert.ok(own, 'the default model has FIM markers');
  assert.equal((await probeFimMarkers(o, own)).verdict, 'ok');
  const other = fimTemplateForFamily(own.family === 'qwen2.5-coder' ? 'deepseek-coder' : 'qwen2.5-coder')!;
  const missing = await probeFimMarkers(o, other);
  assert.equal(missing.verdict, 'missing');
  assert.match(missing.message, /has no .*fim.* token.*ghostline\.server\.promptFormat/);
});

test("auto under an alias that names no family: the FIM layout comes from the served model's vocabulary", async () => {
  const own = pickFimTemplate(Object.fromEntries(loadPromptTokenizer(defaultModelDir(ROOT)).addedTokens))!;
  const conn = await connectServer({
    kind: 'openai',
    url: `${server.url}/v1`,
    model: 'team-model',
    apiKey: 'k-123',
    promptFormat: 'auto',
    timeoutMs: 5000,
    contextTokens: 0,
  });
  assert.equal(conn.error, null);
  assert.equal(conn.template?.family, own.family, conn.notes.join('\n'));
  assert.equal(conn.template?.fileHeader !== undefined, own.fileHeader !== undefined, 'the file separator too, as the local vocabulary has it');
  assert.deepEqual(conn.warnings, []);
});
