import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postProcess } from '../../src/completion/filters/pipeline';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { ROOT } from '../helpers';

// The default model loops on these lines, as it did on the typing replay (bench:pause-latency), until max_new_tokens.
const PROMPTS = ['def f(s, t0, t1):\n    return g(s, t0, t0, t0, t0,', 'const rows = [[], [], [], [],'];

let engine: Engine;
before(async () => {
  engine = await Engine.load(defaultModelDir(ROOT), { threads: 1 });
});
after(async () => engine.dispose());

test('stopOnLoop ends a looping line early, and the filters show what they showed from the whole loop', async () => {
  for (const prompt of PROMPTS) {
    const opts = { maxNewTokens: 96, maxLines: 1, temperature: 0 };
    const whole = await engine.generate(prompt, opts);
    const stopped = await engine.generate(prompt, { ...opts, stopOnLoop: true });
    assert.equal(whole.finishReason, 'length', prompt);
    assert.equal(stopped.finishReason, 'loop', prompt);
    assert.ok(stopped.tokens.length <= whole.tokens.length / 2, `${stopped.tokens.length} of ${whole.tokens.length} tokens`);
    assert.ok(whole.text.startsWith(stopped.text), 'the same greedy text, cut short');
    const linePrefix = prompt.slice(prompt.lastIndexOf('\n') + 1);
    const ctx = { linePrefix, lineSuffix: '', lineAbove: '', nextLines: [], indent: '' };
    const shown = postProcess(stopped.text, { ...ctx, finishReason: stopped.finishReason });
    assert.equal(shown, postProcess(whole.text, { ...ctx, finishReason: whole.finishReason }));
    assert.ok(shown !== null && shown.length < 8, `the loop is cut to one copy: ${JSON.stringify(shown)}`);
  }
});
