/**
 * Token healing for servers that take the prompt as ids (serverHealing.ts): the prompt's last token is held
 * back, the answer must write it first, and it is stripped; an answer that goes elsewhere is no answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { text } from '../../src/engine/shared/prompt';
import { loadPromptTokenizer } from '../../src/servers/promptTokenizer';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { HealedPrefix, planServerHealing } from '../../src/servers/serverHealing';
import { ROOT } from '../helpers';
import { sse, stubServer } from './stubServers';

const tok = loadPromptTokenizer(defaultModelDir(ROOT));
const template = pickFimTemplate(Object.fromEntries(tok.addedTokens))!;

test('the plan holds back the last token of a prompt that ends in text, and nothing after a special token', () => {
  const prompt = [...template.fim('def area(r):\n', '\n'), text('    ret')];
  const ids = tok.encodePrompt(prompt);
  const plan = planServerHealing(tok, prompt, ids);
  assert.ok(plan);
  assert.deepEqual(plan.ids, ids.slice(0, -1));
  assert.ok('    ret'.endsWith(plan.healed) && plan.healed.length > 0, JSON.stringify(plan.healed));
  assert.equal(tok.decode(plan.ids) + plan.healed, tok.decode(ids));
  const empty = template.fim('def area(r):\n', '\n');
  assert.equal(planServerHealing(tok, empty, tok.encodePrompt(empty)), null, 'an empty middle ends in the FIM marker');
  for (const end of ['    total = a +', '    print(', '    ']) {
    const p = [...template.fim('def f(a):\n', '\n'), text(end)];
    assert.equal(planServerHealing(tok, p, tok.encodePrompt(p)), null, `not inside a word: ${JSON.stringify(end)}`);
  }
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
    res.write(sse({ content: answer.slice(0, half), stop: false, completion_probabilities: [{ logprob: -0.1, token: answer.slice(0, half) }] }));
    res.end(sse({ content: answer.slice(half), stop: true, stop_type: 'eos', completion_probabilities: [{ logprob: -0.2, token: answer.slice(half) }] }));
  });
}

test('through a server: the ids go without their last token, and the answer comes back without the held-back text', async () => {
  const prompt = [...template.fim('def area(r):\n', '\n'), text('    return 3.14 * r * r\n\ndef name():\n    ret')];
  const ids = tok.encodePrompt(prompt);
  const healed = tok.decode([ids[ids.length - 1]]);
  const srv = await completion(`${healed}urn "circle"`);
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: srv.url, timeoutMs: 5000 });
    gen.useTokenIds(tok);
    const r = await gen.generate(prompt, { tokenHealing: true, maxLines: 1, stop: [] });
    assert.deepEqual((srv.requests[0] as Record<string, unknown>).prompt, ids.slice(0, -1));
    assert.equal(r.text, 'urn "circle"');
    assert.equal(r.tokenTextEnds?.at(-1), r.text.length, 'the logprobs end where the text does');
    const plain = await gen.generate(prompt, { tokenHealing: false, maxLines: 1, stop: [] });
    assert.deepEqual((srv.requests[1] as Record<string, unknown>).prompt, ids, 'without healing: every id');
    assert.equal(plain.text, `${healed}urn "circle"`);
  } finally {
    await srv.close();
  }
  const elsewhere = await completion(' pass');
  try {
    const gen = new ServerGenerator({ kind: 'llama.cpp', url: elsewhere.url, timeoutMs: 5000 });
    gen.useTokenIds(tok);
    const r = await gen.generate(prompt, { tokenHealing: true, maxLines: 1, stop: [] });
    assert.equal(r.text, '', 'an answer that does not write the held-back text first is no answer');
  } finally {
    await elsewhere.close();
  }
});
