/**
 * The connect-time tokenizer check (issue 27) against stub servers: the local default model's tokenizer
 * compared with what a server's /tokenize and /detokenize say, and the prompt sent as ids when only the
 * splitting of text differs. The real llama-server's side: tokenizerParity.llama.test.ts.
 */
import assert from 'node:assert/strict';
import type * as http from 'node:http';
import { test } from 'node:test';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { compareServerTokenizer } from '../../src/servers/serverTokenizer';
import { checkServerTokenizer, TOKENIZER_PROBE } from '../../src/servers/tokenizerCheck';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { ROOT } from '../helpers';
import { bodyOf, sse, stubServer } from './stubServers';

const MODEL = defaultModelDir(ROOT);
const tok = loadPromptTokenizer(MODEL);
const template = pickFimTemplate(Object.fromEntries(tok.addedTokens))!;
const MARKERS = template.fim('', '').flatMap((p) => ('special' in p ? [p.special] : []));
const local = tok.encodeLiteral(TOKENIZER_PROBE);
/** Another split of the same text in the same vocabulary (one token per character): what a wrong preset does. */
const resplit = [...TOKENIZER_PROBE].flatMap((c) => tok.encodeLiteral(c));

interface Stub {
  tokens?: number[];
  /** The server's rendering of ids; null: no /detokenize. */
  detokenize?: ((ids: number[]) => string) | null;
}

/** A llama.cpp-like server: /tokenize, /detokenize, and /completion answering "x" (streamed). */
function server(s: Stub): http.RequestListener {
  return (req, res) => {
    const body = bodyOf(req);
    if (req.url === '/tokenize' && s.tokens) return res.end(JSON.stringify({ tokens: s.tokens }));
    if (req.url === '/detokenize' && s.detokenize) return res.end(JSON.stringify({ content: s.detokenize(body.tokens as number[]) }));
    if (req.url === '/completion' || req.url === '/v1/completions') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/completion') return res.end(sse({ content: 'x', stop: true, stop_type: 'eos' }));
      return res.end(`${sse({ choices: [{ index: 0, text: 'x', finish_reason: 'stop' }] })}data: [DONE]\n\n`);
    }
    res.writeHead(404).end('not found');
  };
}

const opts = (url: string, kind: 'llama.cpp' | 'openai' | 'ollama' = 'llama.cpp') => ({ kind, url, model: 'm', timeoutMs: 5000 });

test('a server that tokenizes as the local model does: same, and prompts stay text', async () => {
  const srv = await stubServer(server({ tokens: local, detokenize: (ids) => tok.decode(ids) }));
  try {
    const r = await compareServerTokenizer(opts(srv.url), MODEL);
    assert.equal(r.check.verdict, 'same', r.check.message);
    assert.ok(r.setup.healer, 'a server that tokenizes the same has its tokens healed on the local ids');
    assert.equal(new ServerGenerator(opts(srv.url), r.setup).sendsTokenIds, false);
    assert.deepEqual(srv.paths, ['/tokenize']);
  } finally {
    await srv.close();
  }
});

test("the model's vocabulary split its own way (a GGUF's preset): ids, and /completion then gets the local engine's ids", async () => {
  const srv = await stubServer(server({ tokens: resplit, detokenize: (ids) => tok.decode(ids) }));
  try {
    const r = await compareServerTokenizer(opts(srv.url), MODEL);
    const gens = [new ServerGenerator(opts(srv.url), r.setup), new ServerGenerator(opts(srv.url), r.setup)];
    assert.equal(r.check.verdict, 'ids', r.check.message);
    assert.match(r.check.message, /sends the prompt as ghostline-code-small's token ids/);
    assert.equal(r.check.localTokens, local.length);
    assert.equal(r.check.serverTokens, resplit.length);
    assert.equal(r.template?.family, template.family);
    assert.ok(gens.every((g) => g.sendsTokenIds));
    // A document that contains a marker's text: literal text in the ids, as the local engine encodes it.
    const prompt = template.fim('def f(a_b):\n    return <fim_middle>', '\n');
    const out = await gens[0].generate(prompt, { maxNewTokens: 4 }, { infill: { prefix: 'def f', suffix: '\n', middle: '', extra: [] } });
    assert.equal(out.text, 'x');
    assert.equal(srv.paths.at(-1), '/completion', 'never /infill, which re-tokenizes its text');
    const sent = (srv.requests.at(-1) as { prompt: unknown }).prompt;
    assert.deepEqual(sent, tok.encodePrompt(prompt));
    assert.equal((sent as number[]).filter((id) => id === tok.addedTokens.get('<fim_middle>')).length, 1, 'only the real marker is special');
  } finally {
    await srv.close();
  }
});

test('OpenAI-compatible: /v1/completions gets the ids as its prompt; a /v1 URL checks /tokenize at the root', async () => {
  const srv = await stubServer(server({ tokens: resplit, detokenize: (ids) => tok.decode(ids) }));
  try {
    const r = await compareServerTokenizer(opts(`${srv.url}/v1`, 'openai'), MODEL);
    const gen = new ServerGenerator(opts(`${srv.url}/v1`, 'openai'), r.setup);
    assert.equal(r.check.verdict, 'ids', r.check.message);
    assert.deepEqual(srv.paths.slice(0, 3), ['/tokenize', '/detokenize', '/detokenize']);
    const prompt = template.fim('x = 1\n', '');
    await gen.generate(prompt, { maxNewTokens: 4 });
    assert.equal(srv.paths.at(-1), '/v1/completions');
    assert.deepEqual((srv.requests.at(-1) as { prompt: unknown }).prompt, tok.encodePrompt(prompt));
  } finally {
    await srv.close();
  }
});

test('the vocabulary matches but the FIM markers are other tokens: differs, with the message for the log and status bar', async () => {
  const srv = await stubServer(server({ tokens: resplit, detokenize: (ids) => (ids.length === MARKERS.length ? '<a><b><c>' : tok.decode(ids)) }));
  try {
    const r = await compareServerTokenizer(opts(srv.url), MODEL);
    const gens = [new ServerGenerator(opts(srv.url), r.setup)];
    assert.equal(r.check.verdict, 'differs');
    assert.match(r.check.message, /^the server's tokenizer differs from ghostline-code-small's: suggestions may be poor \(.*FIM markers/);
    assert.equal(gens[0].sendsTokenIds, false, 'text as before: ids would carry the wrong markers');
  } finally {
    await srv.close();
  }
});

test('/tokenize works but /detokenize is missing: differs, not silence', async () => {
  const srv = await stubServer(server({ tokens: resplit, detokenize: null }));
  try {
    const r = await checkServerTokenizer(opts(srv.url), tok, 'm', MARKERS);
    assert.equal(r.verdict, 'differs');
    assert.match(r.message, /suggestions may be poor.*\/detokenize .*404/);
  } finally {
    await srv.close();
  }
});

test('another vocabulary altogether (the server runs another model): other-model, no warning', async () => {
  const srv = await stubServer(server({ tokens: [5, 6, 7], detokenize: () => 'something else' }));
  try {
    const r = await checkServerTokenizer(opts(srv.url), tok, 'm', MARKERS);
    assert.equal(r.verdict, 'other-model', r.message);
  } finally {
    await srv.close();
  }
});

test('no /tokenize (a gateway that passes only the completion routes), and Ollama: unchecked, and text prompts', async () => {
  const srv = await stubServer(server({}));
  try {
    const r = await compareServerTokenizer(opts(srv.url, 'openai'), MODEL);
    const gens = [new ServerGenerator(opts(srv.url, 'openai'), r.setup)];
    assert.equal(r.check.verdict, 'unchecked');
    assert.match(r.check.message, /not compared.*404/);
    assert.equal(gens[0].sendsTokenIds, false);
    const o = await checkServerTokenizer(opts(srv.url, 'ollama'), tok, 'm', MARKERS);
    assert.equal(o.verdict, 'unchecked');
    assert.throws(() => new ServerGenerator(opts(srv.url, 'ollama'), { tokenIds: tok }), /takes no token ids/);
  } finally {
    await srv.close();
  }
});

test('a local folder without a tokenizer: unchecked, never a throw', async () => {
  const r = await compareServerTokenizer(opts('http://127.0.0.1:9'), '/nonexistent/model');
  assert.deepEqual(r.setup, {});
  assert.equal(r.check.verdict, 'unchecked');
  assert.match(r.check.message, /could not be read/);
});
