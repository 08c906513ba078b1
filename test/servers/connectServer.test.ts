/**
 * connectServer: the one way the editor, `serve-stdio --backend` and the parity tests connect to a server,
 * against stub servers that answer as llama.cpp's and Ollama's do. What the connection settles (context, FIM
 * layout, token ids, calibration, warnings) is what the generators it returns do.
 */
import assert from 'node:assert/strict';
import type * as http from 'node:http';
import { test } from 'node:test';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { connectServer, FALLBACK_CONTEXT_TOKENS } from '../../src/servers/connectServer';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { TOKENIZER_PROBE } from '../../src/servers/tokenizerCheck';
import { ROOT } from '../helpers';
import { bodyOf, sse, stubServer } from './stubServers';

const MODEL = defaultModelDir(ROOT);
const tok = loadPromptTokenizer(MODEL);
const local = tok.encodeLiteral(TOKENIZER_PROBE);
const resplit = [...TOKENIZER_PROBE].flatMap((c) => tok.encodeLiteral(c));

/** llama-server as far as a connection asks: /props with its slot context, /tokenize, /detokenize, /completion. */
function llamaServer(o: { tokens: number[]; ctx: number; markers?: boolean }): http.RequestListener {
  return (req, res) => {
    const body = bodyOf(req);
    if (req.url === '/props') return res.end(JSON.stringify({ default_generation_settings: { n_ctx: o.ctx }, model_path: '/models/served.gguf' }));
    if (req.url === '/tokenize') return res.end(JSON.stringify({ tokens: o.tokens }));
    if (req.url === '/detokenize') {
      const ids = body.tokens as number[];
      return res.end(JSON.stringify({ content: o.markers === false && ids.length <= 3 ? '<a><b><c>' : tok.decode(ids) }));
    }
    if (req.url === '/completion') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(sse({ content: 'x', stop: true, stop_type: 'eos' }));
    }
    res.writeHead(404).end('not found');
  };
}

const request = (url: string) => ({ kind: 'llama.cpp' as const, url, promptFormat: 'auto', timeoutMs: 5000, contextTokens: 0, localModelDir: MODEL });

test("a llama-server with the local model's vocabulary split its own way: ids, its context, the local calibration, no warning", async () => {
  const srv = await stubServer(llamaServer({ tokens: resplit, ctx: 2048 }));
  try {
    const conn = await connectServer(request(srv.url));
    assert.equal(conn.error, null);
    assert.equal(conn.label, `llama.cpp at ${srv.url}`);
    assert.equal(conn.traits.contextTokens, 2048);
    assert.ok(conn.inline.sendsTokenIds && conn.generate.sendsTokenIds);
    assert.equal(conn.template?.family, pickFimTemplate(Object.fromEntries(tok.addedTokens))?.family);
    assert.match(String(conn.traits.calibrationSource), /the server runs the local model's tokens/);
    assert.deepEqual(conn.warnings, []);
    assert.match(conn.summary, /served\.gguf, context 2048 tokens, FIM \S+ as token ids/);
    // The generator does what the connection settled: the prompt goes to /completion as the local ids.
    const prompt = conn.template!.fim('def f():\n    return ', '\n');
    await conn.inline.generate(prompt, { maxNewTokens: 2 });
    assert.equal(srv.paths.at(-1), '/completion');
    assert.deepEqual((srv.requests.at(-1) as { prompt: unknown }).prompt, tok.encodePrompt(prompt));
  } finally {
    await srv.close();
  }
});

test('the same split as the local model: text prompts healed on its ids; a context set in settings wins over the server', async () => {
  const srv = await stubServer(llamaServer({ tokens: local, ctx: 2048 }));
  try {
    const conn = await connectServer({ ...request(srv.url), contextTokens: 4096 });
    assert.equal(conn.traits.contextTokens, 4096);
    assert.equal(conn.inline.sendsTokenIds, false);
    assert.match(String(conn.traits.calibrationSource), /the server runs the local model's tokens/);
  } finally {
    await srv.close();
  }
});

test('FIM markers that are other tokens on the server: one warning, the generic calibration, and text prompts', async () => {
  const srv = await stubServer(llamaServer({ tokens: resplit, ctx: 512, markers: false }));
  try {
    const conn = await connectServer(request(srv.url));
    assert.equal(conn.warnings.length, 1);
    assert.match(conn.warnings[0], /tokenizer differs/);
    assert.equal(conn.traits.calibrationSource, 'generic (server)');
    assert.equal(conn.inline.sendsTokenIds, false);
  } finally {
    await srv.close();
  }
});

test('a server that does not answer: the error, and generators from the request alone (the settings format and the fallback context)', async () => {
  const conn = await connectServer({ ...request('http://127.0.0.1:9'), kind: 'openai', model: 'qwen2.5-coder-1.5b' });
  assert.ok(conn.error);
  assert.equal(conn.traits.contextTokens, FALLBACK_CONTEXT_TOKENS);
  assert.equal(conn.template?.family, 'qwen2.5-coder');
  assert.deepEqual(conn.warnings, []);
});

test("Ollama with the FIM format named: Ghostline's own prompt; without the local model nothing is compared", async () => {
  const srv = await stubServer((req, res) => {
    if (req.url === '/api/show') return res.end(JSON.stringify({ capabilities: ['completion'], model_info: { 'qwen2.context_length': 32768 } }));
    res.writeHead(404).end('not found');
  });
  try {
    const conn = await connectServer({ kind: 'ollama', url: srv.url, model: 'coder', promptFormat: 'starcoder', timeoutMs: 5000, contextTokens: 0 });
    assert.equal(conn.error, null);
    assert.ok(conn.inline.sendsOwnPrompt);
    assert.equal(conn.template?.family, 'starcoder');
    assert.deepEqual(srv.paths, ['/api/show']);
  } finally {
    await srv.close();
  }
});

/** An OpenAI-compatible server (vLLM's routes) that serves `model` and has `markers` as single tokens. */
function openAiServer(model: string, markers: string[] | null): http.RequestListener {
  return (req, res) => {
    if (req.url === '/v1/models') return res.end(JSON.stringify({ data: [{ id: model, max_model_len: 4096 }] }));
    if (req.url === '/tokenize' && markers) {
      const text = String(bodyOf(req).prompt);
      return res.end(JSON.stringify({ tokens: markers.includes(text) ? [5] : [...text].map((_, i) => 100 + i) }));
    }
    res.writeHead(404).end('not found');
  };
}

test('auto on an OpenAI-compatible server: the family whose markers the served vocabulary has, whatever the served name', async () => {
  const starcoder = ['<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>'];
  // A Qwen-like name does not win over the vocabulary: the served model has StarCoder's markers.
  for (const model of ['team-model', 'qwen-7b-alias']) {
    const srv = await stubServer(openAiServer(model, starcoder));
    try {
      const conn = await connectServer({ kind: 'openai', url: `${srv.url}/v1`, model, promptFormat: 'auto', timeoutMs: 5000, contextTokens: 0 });
      assert.equal(conn.error, null);
      assert.equal(conn.template?.family, 'starcoder', model);
      assert.match(conn.summary, /FIM starcoder/);
      assert.deepEqual(conn.warnings, []);
      assert.ok(
        conn.notes.some((n) => /has the starcoder FIM markers/.test(n)),
        conn.notes.join('\n'),
      );
    } finally {
      await srv.close();
    }
  }
});

test('auto without /tokenize: the name guess stands, and the log says it is a guess; a named family is only checked', async () => {
  const guessed = await stubServer(openAiServer('Qwen2.5-Coder-7B', null));
  try {
    const conn = await connectServer({ kind: 'openai', url: guessed.url, model: 'Qwen2.5-Coder-7B', promptFormat: 'auto', timeoutMs: 5000, contextTokens: 0 });
    assert.equal(conn.template?.family, 'qwen2.5-coder');
    assert.ok(
      conn.notes.some((n) => /not read.*guessed from the model's name/.test(n)),
      conn.notes.join('\n'),
    );
  } finally {
    await guessed.close();
  }
  const named = await stubServer(openAiServer('team-model', ['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>']));
  try {
    const conn = await connectServer({ kind: 'openai', url: named.url, model: 'team-model', promptFormat: 'starcoder', timeoutMs: 5000, contextTokens: 0 });
    assert.equal(conn.template?.family, 'starcoder', "the user's choice is kept");
    assert.match(conn.warnings.join('\n'), /no <fim_prefix> <fim_suffix> <fim_middle> tokens/);
  } finally {
    await named.close();
  }
});
