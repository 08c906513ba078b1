import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LeanKvCache } from '../../src/engine/model/leanCache';
import { planMovedRuns } from '../../src/engine/model/movedRuns';
import { type ModelFolder, readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { configInvFreq } from '../../src/engine/model/rotary';
import { TextTokenizer } from '../../src/engine/model/tokenizer';
import { Engine } from '../../src/engine/worker/engine';
import { MOVE_CACHED_RUNS_OVER_MS } from '../../src/engine/shared/engineOptions';
import { TINY_FUSED } from '../helpers';

const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

describe('planMovedRuns', () => {
  test('a window start moved down: the kept text is one run, moved to just after the shared head', () => {
    const cached = [1, ...range(100, 400)];
    const prompt = [1, ...range(180, 400), 7, 8, 9];
    assert.deepEqual(planMovedRuns(cached, prompt, 1, 64), [{ from: 81, to: 1, length: 220 }]);
  });

  test('lines inserted before a run (the FIM anchor moved) move it later; the inserted tokens are left to prefill', () => {
    const cached = [1, ...range(100, 200), 2, ...range(500, 700)];
    const prompt = [1, ...range(100, 200), ...range(900, 930), 2, ...range(500, 700), 3];
    // The shared prefix is the first 101 tokens; the run starts at the separator token.
    assert.deepEqual(planMovedRuns(cached, prompt, 101, 64), [{ from: 101, to: 131, length: 201 }]);
  });

  test("runs shorter than the minimum are not moved, and the prompt's last token is never covered", () => {
    const cached = range(0, 300);
    assert.deepEqual(planMovedRuns(cached, [...range(0, 10), ...range(200, 250)], 10, 64), []);
    const runs = planMovedRuns(cached, [0, ...range(100, 300)], 1, 64);
    assert.deepEqual(runs, [{ from: 100, to: 1, length: 199 }]);
  });

  test('nothing in common gives no runs', () => {
    assert.deepEqual(planMovedRuns(range(0, 500), range(1000, 1500), 0, 64), []);
  });
});

// Lines a window start can drop: each about a dozen tokens of the tiny tokenizer.
const LINES = Array.from({ length: 16 }, (_, i) => `    total_${i} = compute(values[${i}], scale=${i % 7})\n`);

describe('moved runs on a lean graph', () => {
  let model: OnnxCausalLM;
  let folder: ModelFolder;
  before(async () => {
    folder = readModelFolder(TINY_FUSED);
    model = await OnnxCausalLM.load(folder.onnxPath, folder.config, { threads: 1 });
  });
  after(async () => model.release());

  test("a moved run's layer-0 keys and values equal a cold run's at the new positions (the rotary turn is exact)", async () => {
    const invFreq = configInvFreq(folder.config, model.contract.headDim)!;
    const tok = new TextTokenizer(folder.tokenizerJson, folder.tokenizerConfig);
    const a = tok.encodePrompt(`def f():\n${LINES.join('')}`);
    const b = tok.encodePrompt(`def f():\n${LINES.slice(4).join('')}`);
    const runs = planMovedRuns(a, b, 0, 64);
    assert.equal(runs.length, 1, JSON.stringify(runs));
    assert.ok(runs[0].from > runs[0].to, 'the run moves to earlier positions');
    const warm = (await model.forward([a], model.emptyCache())).cache as LeanKvCache;
    const cold = (await model.forward([b], model.emptyCache())).cache as LeanKvCache;
    const moved = LeanKvCache.assemble(warm, 0, runs, b, invFreq);
    const { kvHeads: h, headDim: d } = model.contract;
    let keyErr = 0;
    let valueErr = 0;
    let layer1Diff = 0;
    const { to, length } = runs[0];
    for (let head = 0; head < h; head++) {
      for (let t = to; t < to + length; t++) {
        for (let k = 0; k < d; k++) {
          const ki = head * d + k;
          keyErr = Math.max(keyErr, Math.abs(moved.store.keys[0][ki * moved.store.cap + t] - cold.store.keys[0][ki * cold.store.cap + t]));
          layer1Diff = Math.max(layer1Diff, Math.abs(moved.store.keys[1][ki * moved.store.cap + t] - cold.store.keys[1][ki * cold.store.cap + t]));
          valueErr = Math.max(
            valueErr,
            Math.abs(moved.store.values[0][(head * moved.store.cap + t) * d + k] - cold.store.values[0][(head * cold.store.cap + t) * d + k]),
          );
        }
      }
    }
    assert.ok(keyErr < 1e-4, `layer-0 keys differ by ${keyErr}`);
    assert.ok(valueErr < 1e-6, `layer-0 values differ by ${valueErr}`);
    // Deeper layers saw the dropped lines: there the move is an approximation, and the test can tell.
    assert.ok(layer1Diff > 1e-4, `layer-1 keys differ by only ${layer1Diff}`);
  });
});

describe('the engine moving cached runs', () => {
  const A = `def f():\n${LINES.join('')}`;
  const B = `def f():\n${LINES.slice(4).join('')}    return total_0\n`;

  test('over 0 ms: a moved window start prefills the new tail only', async () => {
    const engine = await Engine.load(TINY_FUSED, { threads: 1, prefillChunk: 32, moveCachedRunsOverMs: 0 });
    try {
      assert.equal(engine.info.moveCachedRunsOverMs, 0, 'the info says what the engine was given');
      assert.ok(engine.info.canMoveCachedRuns, 'a lean graph');
      await engine.generate(A, { maxNewTokens: 4 });
      const r = await engine.generate(B, { maxNewTokens: 4 });
      assert.ok(r.stats.reusedTokens > r.stats.promptTokens * 0.7, `reused ${r.stats.reusedTokens} of ${r.stats.promptTokens}`);
      assert.ok(r.stats.prefillTokens < 30, `prefilled ${r.stats.prefillTokens}`);
      assert.equal(r.stats.reusedTokens + r.stats.prefillTokens, r.stats.promptTokens);
      // The next keystroke continues the assembled cache like any other.
      const next = await engine.generate(`${B}    `, { maxNewTokens: 4 });
      assert.ok(next.stats.prefillTokens <= 3, `prefilled ${next.stats.prefillTokens}`);
      assert.equal(next.stats.reusedTokens + next.stats.prefillTokens, next.stats.promptTokens);
    } finally {
      await engine.dispose();
    }
  });

  test('a prefill abandoned before its moved run: the next request takes the run from the cache it came from', async () => {
    // The FIM anchor's move in small: new lines before a long run that the cache already holds.
    const inserted = `def f():\n${Array.from({ length: 4 }, (_, i) => `    extra_${i} = load(path_${i}, mode=${i})\n`).join('')}${LINES.join('')}`;
    const load = () => Engine.load(TINY_FUSED, { threads: 1, prefillChunk: 16, moveCachedRunsOverMs: 0 });
    const [resumed, straight] = [await load(), await load()];
    try {
      const opts = { maxNewTokens: 6, ignoreEos: true };
      for (const engine of [resumed, straight]) await engine.generate(A, opts);
      const ac = new AbortController();
      const abandoned = await resumed.generate(inserted, opts, { signal: ac.signal, onText: () => undefined, onStart: () => setImmediate(() => ac.abort()) });
      assert.equal(abandoned.finishReason, 'cancelled');
      const r = await resumed.generate(inserted, opts);
      const whole = await straight.generate(inserted, opts);
      assert.ok(whole.stats.reusedTokens > whole.stats.promptTokens / 2, `reused ${whole.stats.reusedTokens} of ${whole.stats.promptTokens}: the run moved`);
      // Before: the abandoned prefill's head was continued and the whole run prefilled again.
      assert.ok(r.stats.prefillTokens < whole.stats.prefillTokens, `prefilled ${r.stats.prefillTokens}, against ${whole.stats.prefillTokens} uninterrupted`);
      assert.equal(r.stats.reusedTokens + r.stats.prefillTokens, r.stats.promptTokens);
      // The same cache as the uninterrupted move (the same chunks, the same run): the same tokens.
      assert.equal(r.tokens.length, 6);
      assert.deepEqual(r.tokens, whole.tokens);
    } finally {
      await resumed.dispose();
      await straight.dispose();
    }
  });

  test('never (a negative budget), or by default on a model that prefills fast: only the shared prefix is reused, as a cold run', async () => {
    for (const opts of [{ moveCachedRunsOverMs: -1 }, {}]) {
      const engine = await Engine.load(TINY_FUSED, { threads: 1, prefillChunk: 32, ...opts });
      try {
        assert.equal(engine.info.moveCachedRunsOverMs, opts.moveCachedRunsOverMs ?? MOVE_CACHED_RUNS_OVER_MS);
        await engine.generate(A, { maxNewTokens: 4 });
        const r = await engine.generate(B, { maxNewTokens: 8 });
        assert.ok(r.stats.reusedTokens < r.stats.promptTokens * 0.1, `reused ${r.stats.reusedTokens} of ${r.stats.promptTokens}`);
        engine.resetCache();
        const cold = await engine.generate(B, { maxNewTokens: 8 });
        assert.deepEqual(r.tokens, cold.tokens);
      } finally {
        await engine.dispose();
      }
    }
  });
});
