/**
 * Token healing for servers that take the prompt as ids (serverHealing.ts): the prompt's last token is held
 * back, the answer must write it first, and it is stripped; an answer that goes elsewhere is no answer. On
 * llama.cpp a grammar steers the answer there, and the log-probabilities are taken among the continuations.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { text } from '../../src/engine/shared/prompt';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { HealedPrefix, healedLogprob, planServerHealing, startsWithGrammar } from '../../src/servers/serverHealing';
import { ROOT } from '../helpers';
import { sse, stubServer } from './stubServers';

const tok = loadPromptTokenizer(defaultModelDir(ROOT));
const template = pickFimTemplate(Object.fromEntries(tok.addedTokens))!;

test('the plan holds back the last token of a prompt that ends in text, and nothing after a special token', () => {
  const prompt = [...template.fim('def area(r):\n', '\n'), text('    ret')];
  const ids = tok.encodePrompt(prompt);
  const plan = planServerHealing(tok, prompt, ids, 'reject');
  assert.ok(plan);
  assert.deepEqual(plan.ids, ids.slice(0, -1));
  assert.ok('    ret'.endsWith(plan.healed) && plan.healed.length > 0, JSON.stringify(plan.healed));
  assert.equal(tok.decode(plan.ids) + plan.healed, tok.decode(ids));
  const empty = template.fim('def area(r):\n', '\n');
  for (const mode of ['reject', 'steer'] as const) {
    assert.equal(planServerHealing(tok, empty, tok.encodePrompt(empty), mode), null, `${mode}: an empty middle ends in the FIM marker`);
  }
  for (const end of ['    total = a +', '    print(', '    ']) {
    const p = [...template.fim('def f(a):\n', '\n'), text(end)];
    assert.equal(planServerHealing(tok, p, tok.encodePrompt(p), 'reject'), null, `reject: not inside a word: ${JSON.stringify(end)}`);
  }
  // Steered (llama.cpp's grammar), healing is planned as the local engine plans it: the indentation of a
  // fresh line too, whose last token is re-split as if a word followed (a space is held back).
  const indent = [...template.fim('def f(a):\n', '\n'), text('    ')];
  const steered = planServerHealing(tok, indent, tok.encodePrompt(indent), 'steer');
  assert.ok(steered && steered.healed.trim() === '' && steered.healed.length > 0, JSON.stringify(steered));
  assert.equal(tok.decode(steered.ids) + steered.healed, tok.decode(tok.encodePrompt(indent)));
});

test('the grammar: any text that starts with the held-back one, quotes, backslashes and control characters escaped', () => {
  assert.equal(startsWithGrammar('ret'), 'root ::= "ret" .*');
  assert.equal(startsWithGrammar(' "a\\b"\t'), 'root ::= " \\"a\\\\b\\"\\x09" .*');
});

test("a healed token's log-probability is taken among the candidates that continue the held-back text", () => {
  // Candidates: "return" (-1.0), "re" (-2.0) continue "ret"; " if" (-0.5) does not.
  const top = [
    { text: ' if', logprob: -0.5 },
    { text: 'return', logprob: -1.0 },
    { text: 're', logprob: -2.0 },
  ];
  const expected = -1.0 - Math.log(Math.exp(-1.0) + Math.exp(-2.0));
  assert.ok(Math.abs(healedLogprob({ text: 'return', logprob: -1.0 }, top, 'ret') - expected) < 1e-12);
  // The chosen token outside the top list still counts; alone it is certain.
  assert.equal(healedLogprob({ text: 'retval', logprob: -7 }, [{ text: ' if', logprob: -0.1 }], 'ret'), 0);
  // Past the first token: what is still held back ("t" after "re").
  const second = [
    { text: 'turn', logprob: -0.2 },
    { text: 't', logprob: -1.6 },
    { text: 'x', logprob: -0.1 },
  ];
  assert.ok(Math.abs(healedLogprob({ text: 'turn', logprob: -0.2 }, second, 't') - (-0.2 - Math.log(Math.exp(-0.2) + Math.exp(-1.6)))) < 1e-12);
});

test('the held-back text is checked as it streams: split over chunks, stripped, or a mismatch', () => {
  const h = new HealedPrefix(' ret');
  assert.equal(h.push(' r'), '');
  assert.equal(h.done, false);
  assert.equal(h.push('eturn x'), 'urn x');
  assert.equal(h.done, true);
  assert.equal(h.push(' + 1'), ' + 1');
  assert.equal(new HealedPrefix(' ret').push(' if'), null);
  assert.equal(new HealedPrefix(' ret').push(' re'), '');
});

/** A /completion that answers `answer` in two chunks, recording the prompt ids it got. */
async function completion(answer: string) {
  return stubServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const half = Math.ceil(answer.length / 2);
    // The first token's top candidates: itself and a rival that does not continue anything held back.
    const top = [
      { id: 1, token: answer.slice(0, half), logprob: -0.1 },
      { id: 2, token: '@@', logprob: -2.5 },
    ];
    res.write(
      sse({ content: answer.slice(0, half), stop: false, completion_probabilities: [{ logprob: -0.1, token: answer.slice(0, half), top_logprobs: top }] }),
    );
    res.end(sse({ content: answer.slice(half), stop: true, stop_type: 'eos', completion_probabilities: [{ logprob: -0.2, token: answer.slice(half) }] }));
  });
}

test('through a server: the ids go without their last token, and the answer comes back without the held-back text', async () => {
  const prompt = [...template.fim('def area(r):\n', '\n'), text('    return 3.14 * r * r\n\ndef name():\n    ret')];
  const ids = tok.encodePrompt(prompt);
  const healed = tok.decode([ids[ids.length - 1]]);
  const srv = await completion(`${healed}urn "circle"`);
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 }, { tokenIds: tok });
    const r = await gen.generate(prompt, { tokenHealing: true, maxLines: 1, stop: [] });
    const body = srv.requests[0] as Record<string, unknown>;
    assert.deepEqual(body.prompt, ids.slice(0, -1));
    assert.equal(body.grammar, startsWithGrammar(healed), 'llama.cpp: steered by a grammar');
    assert.equal(body.n_probs, 16, 'with the top candidates');
    assert.equal(r.text, 'urn "circle"');
    assert.equal(r.tokenTextEnds?.at(-1), r.text.length, 'the logprobs end where the text does');
    // The first token covers the held-back text: among its continuations (the rival does not continue it) it
    // is certain; the second token is past it and keeps the server's number.
    assert.deepEqual(r.tokenLogprobs, [0, -0.2]);
    const plain = await gen.generate(prompt, { tokenHealing: false, maxLines: 1, stop: [] });
    assert.deepEqual((srv.requests[1] as Record<string, unknown>).prompt, ids, 'without healing: every id');
    assert.equal((srv.requests[1] as Record<string, unknown>).grammar, undefined, 'and no grammar');
    assert.deepEqual(plain.tokenLogprobs, [-0.1, -0.2], 'nor renormalised log-probabilities');
    assert.equal(plain.text, `${healed}urn "circle"`);
  } finally {
    await srv.close();
  }
  const elsewhere = await completion(' pass');
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: elsewhere.url, timeoutMs: 5000 }, { tokenIds: tok });
    const r = await gen.generate(prompt, { tokenHealing: true, maxLines: 1, stop: [] });
    assert.equal(r.text, '', 'an answer that does not write the held-back text first is no answer');
  } finally {
    await elsewhere.close();
  }
});

test('a server that tokenizes as the local model (verdict "same"): /infill healed on the prefix ids, /v1 sent as ids', async () => {
  const infill = { prefix: 'def area(r):\n    return 3.14 * r * r\n\ndef name():\n', middle: '    ret', suffix: '\n', extra: [] };
  const before = infill.prefix + infill.middle;
  const ids = tok.encodeLiteral(before);
  const healed = tok.decode([ids[ids.length - 1]]);
  const srv = await completion(`${healed}urn "circle"`);
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 }, { healer: tok });
    const prompt = [...template.fim(infill.prefix, infill.suffix), text(infill.middle)];
    const r = await gen.generate(prompt, { tokenHealing: true, maxLines: 1, stop: [] }, { infill });
    assert.equal(srv.paths[0], '/infill', "the server's own layout, still");
    const body = srv.requests[0] as Record<string, unknown>;
    assert.deepEqual(body.input_prefix, ids.slice(0, -1), 'the prefix and the cursor line as ids, less the held-back token');
    assert.equal(body.prompt, '');
    assert.equal(body.grammar, startsWithGrammar(healed));
    assert.equal(r.text, 'urn "circle"');
    // Without healing (a prompt that ends after punctuation, or healing off): the text parts as before.
    await gen.generate(prompt, { tokenHealing: false, maxLines: 1, stop: [] }, { infill });
    assert.equal((srv.requests[1] as Record<string, unknown>).input_prefix, infill.prefix);
    assert.equal((srv.requests[1] as Record<string, unknown>).prompt, infill.middle);
  } finally {
    await srv.close();
  }
  const oai = new ServerGenerator({ kind: 'openai', url: 'http://127.0.0.1:9', model: 'm', timeoutMs: 1000 }, { healer: tok });
  assert.equal(oai.sendsTokenIds, true, 'OpenAI-compatible: the prompt as ids (the same tokens, and healing)');
});
