import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fimTemplateForFamily } from '../../src/completion/prompt/fimTemplates';
import { probeFimMarkers } from '../../src/servers/fimProbe';
import { bodyOf, stubServer } from './stubServers';

/** A /tokenize that knows `known` as single tokens and splits anything else into characters. */
function tokenizer(known: string[]) {
  return stubServer((req, res) => {
    if (req.url !== '/tokenize') return res.writeHead(404).end('not found');
    const text = String(bodyOf(req).content);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ tokens: known.includes(text) ? [7] : [...text].map((_, i) => 100 + i) }));
  });
}

test('FIM probe: every marker one token is ok; a family the model lacks is named, with the setting to change', async () => {
  const qwen = fimTemplateForFamily('qwen2.5-coder')!;
  const srv = await tokenizer(['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>']);
  try {
    const o = { kind: 'openai' as const, url: `${srv.url}/v1`, model: 'm', timeoutMs: 5000 };
    const ok = await probeFimMarkers(o, qwen);
    assert.equal(ok.verdict, 'ok', ok.message);
    assert.equal(srv.paths[0], '/tokenize', 'asked at the root, not under /v1');
    assert.equal((srv.requests[0] as Record<string, unknown>).parse_special, true, 'special tokens parsed');
    const starcoder = await probeFimMarkers(o, fimTemplateForFamily('starcoder')!);
    assert.equal(starcoder.verdict, 'missing');
    assert.match(starcoder.message, /no <fim_prefix> <fim_suffix> <fim_middle> tokens.*starcoder.*ghostline\.server\.promptFormat/);
  } finally {
    await srv.close();
  }
});

test('FIM probe: a server without /tokenize is unchecked, not a failure', async () => {
  const srv = await stubServer((_req, res) => res.writeHead(404).end('no such route'));
  try {
    const r = await probeFimMarkers({ kind: 'openai', url: srv.url, timeoutMs: 5000 }, fimTemplateForFamily('qwen2.5-coder')!);
    assert.equal(r.verdict, 'unchecked');
    assert.match(r.message, /not checked: \/tokenize .*404/);
  } finally {
    await srv.close();
  }
});
