import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fimTemplateForFamily } from '../../src/completion/prompt/fimTemplates';
import { detectFimTemplate, probeFimMarkers } from '../../src/servers/fimProbe';
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

/** What a /tokenize of this vocabulary makes the auto format: the family and its file header's first part. */
async function detected(known: string[]) {
  const srv = await tokenizer(known);
  try {
    const d = await detectFimTemplate({ kind: 'openai', url: `${srv.url}/v1`, model: 'team-model', timeoutMs: 5000 });
    const header = d.template?.fileHeader?.('a.py')[0];
    return { ...d, family: d.template?.family, header: header && 'special' in header ? header.special : undefined, asked: srv.paths.length };
  } finally {
    await srv.close();
  }
}

test('FIM detection: the family is the one whose markers the served vocabulary has, optional tokens only where it has them', async () => {
  const starcoder = await detected(['<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>']);
  assert.equal(starcoder.verdict, 'found', starcoder.message);
  assert.equal(starcoder.family, 'starcoder');
  assert.equal(starcoder.header, '<file_sep>');
  assert.match(starcoder.message, /starcoder FIM markers \(<fim_prefix> .*<file_sep>\)/);
  // The other families' other markers are not asked: a control and five first markers, then starcoder's three.
  assert.equal(starcoder.asked, 9);
  const noFileSep = await detected(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']);
  assert.equal(noFileSep.family, 'starcoder');
  assert.equal(noFileSep.header, undefined, 'no file header where the model has no <file_sep>');
  const qwen = await detected(['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_sep|>', '<|repo_name|>']);
  assert.equal(qwen.family, 'qwen2.5-coder');
  assert.equal(qwen.header, '<|file_sep|>');
  const gemma = await detected(['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_separator|>']);
  assert.equal(gemma.family, 'codegemma');
  assert.ok(gemma.template?.stopTokens.includes('<|file_separator|>'));
  assert.equal((await detected(['<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>'])).family, 'deepseek-coder');
  const llama = await detected(['▁<PRE>', '▁<SUF>', '▁<MID>']);
  assert.equal(llama.family, 'codellama');
  const pre = llama.template!.fim('a', 'b')[0];
  assert.equal('special' in pre && pre.special, '▁<PRE>', "sent as the vocabulary's own spelling");
  // A first marker alone is not a family: the other two must be tokens as well.
  const partial = await detected(['<fim_prefix>']);
  assert.equal(partial.verdict, 'none');
  assert.equal(partial.template, null);
});

test('FIM detection: no family is prefix-only; a /tokenize that cannot tell (one token for anything, or none) is unchecked', async () => {
  const none = await detected([]);
  assert.equal(none.verdict, 'none');
  assert.match(none.message, /no family Ghostline knows: prefix-only prompts/);
  const any = await stubServer((_req, res) => res.end(JSON.stringify({ tokens: [7] })));
  const missing = await stubServer((_req, res) => res.writeHead(404).end('no such route'));
  try {
    const a = await detectFimTemplate({ kind: 'openai', url: any.url, timeoutMs: 5000 });
    assert.equal(a.verdict, 'unchecked');
    assert.match(a.message, /one token for any text/);
    const m = await detectFimTemplate({ kind: 'openai', url: missing.url, timeoutMs: 5000 });
    assert.equal(m.verdict, 'unchecked');
    assert.match(m.message, /not read: \/tokenize .*404/);
  } finally {
    await any.close();
    await missing.close();
  }
});
