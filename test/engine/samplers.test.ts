import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Candidates, topIndices } from '../../src/engine/decode/samplers/candidates';
import { SamplerChain, draw, verifyDraft } from '../../src/engine/decode/samplers/chain';
import { minP } from '../../src/engine/decode/samplers/minP';
import { Prng } from '../../src/engine/decode/samplers/prng';
import { repetitionPenalty } from '../../src/engine/decode/samplers/repetitionPenalty';
import { topK } from '../../src/engine/decode/samplers/topK';
import { topP } from '../../src/engine/decode/samplers/topP';

const ctx = (history: number[] = []) => ({ history, rng: new Prng(1) });
const randomRow = (n: number, seed: number) => {
  const rng = new Prng(seed);
  return Float32Array.from({ length: n }, () => (rng.next() - 0.5) * 20);
};
const probs = (c: Candidates, row: Float32Array) => {
  const m = Math.max(...row);
  const z = row.reduce((s, l) => s + Math.exp(l - m), 0);
  return Array.from(c.ids.subarray(0, c.size), (id) => Math.exp(row[id] - m) / z);
};

test('topIndices returns the k largest, largest first, like a full sort', () => {
  const row = randomRow(5000, 3);
  const sorted = Array.from(row.keys()).sort((a, b) => row[b] - row[a]);
  for (const k of [1, 5, 40, 5000]) assert.deepEqual(Array.from(topIndices(row, row.length, k)), sorted.slice(0, k));
  // Ties (many equal logits, -Infinity for masked columns): the lower index first, as a stable sort.
  const tied = Float32Array.from(randomRow(3000, 5), (v, i) => (i % 7 === 0 ? -Infinity : Math.round(v * 2)));
  const stable = Array.from(tied.keys()).sort((a, b) => (tied[a] === tied[b] ? a - b : tied[b] - tied[a]));
  for (const k of [1, 3, 50, 3000]) assert.deepEqual(Array.from(topIndices(tied, tied.length, k)), stable.slice(0, k), `k ${k}`);
  // Rising and falling rows (every value displaces the held ones, or none does), on both sides of the small-k path.
  const rising = Float32Array.from({ length: 4000 }, (_, i) => i / 7);
  const falling = rising.slice().reverse();
  for (const k of [8, 64, 65, 200]) {
    assert.deepEqual(
      Array.from(topIndices(rising, rising.length, k)),
      Array.from({ length: k }, (_, i) => 3999 - i),
      `rising, k ${k}`,
    );
    assert.deepEqual(
      Array.from(topIndices(falling, falling.length, k)),
      Array.from({ length: k }, (_, i) => i),
      `falling, k ${k}`,
    );
  }
});

test('top-k keeps exactly k candidates, the most likely ones', () => {
  const row = randomRow(1000, 4);
  const c = new Candidates(row.length).reset(row);
  topK(10).apply(c, ctx());
  assert.equal(c.size, 10);
  const min = Math.min(...c.logits.subarray(0, 10));
  assert.equal(row.filter((l) => l > min).length, 9);
});

test('top-p keeps the smallest set whose mass reaches p', () => {
  for (const p of [0.1, 0.5, 0.9, 0.99]) {
    const row = randomRow(20000, 5).map((l) => l / 4);
    const c = new Candidates(row.length).reset(row);
    topP(p).apply(c, ctx());
    const ps = probs(c, row);
    const mass = ps.reduce((a, b) => a + b, 0);
    assert.ok(mass >= p - 1e-6, `mass ${mass} < ${p}`);
    assert.ok(mass - ps[ps.length - 1] < p, 'one fewer would not reach p');
    for (let i = 1; i < ps.length; i++) assert.ok(ps[i] <= ps[i - 1], 'sorted highest first');
  }
});

test('min-p keeps tokens with at least p times the top probability', () => {
  const row = Float32Array.from([0, Math.log(0.5), Math.log(0.09), Math.log(0.11), -50]);
  const c = new Candidates(row.length).reset(row);
  minP(0.1).apply(c, ctx());
  assert.deepEqual(Array.from(c.ids.subarray(0, c.size)).sort(), [0, 1, 3]);
});

test('repetition penalty lowers every recently seen token', () => {
  const row = Float32Array.from([2, -2, 1, 3]);
  const c = new Candidates(row.length).reset(row);
  repetitionPenalty(2, 64).apply(c, ctx([0, 1]));
  assert.deepEqual(Array.from(c.logits.subarray(0, 4)), [1, -4, 1, 3]);
});

test('temperature 0 is argmax, whatever the other knobs say', () => {
  const row = randomRow(50000, 6);
  const best = Array.from(row.keys()).reduce((a, b) => (row[b] > row[a] ? b : a));
  const chain = new SamplerChain({ temperature: 0, topK: 3, topP: 0.2, minP: 0.5, repetitionPenalty: 1, repetitionWindow: 64 });
  assert.equal(chain.describe(), 'argmax');
  for (let s = 0; s < 5; s++) assert.equal(chain.sample(row, { history: [], rng: new Prng(s) }), best);
});

test('the chain order is explicit and the same seed gives the same draws', () => {
  const opts = { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repetitionPenalty: 1.1, repetitionWindow: 64 };
  const chain = new SamplerChain(opts);
  assert.equal(chain.describe(), 'repetition_penalty(1.1) -> top_k(40) -> temperature(0.8) -> top_p(0.95) -> min_p(0.05) -> draw');
  const row = randomRow(30000, 7).map((l) => l / 5);
  const run = (seed: number) => {
    const rng = new Prng(seed);
    return Array.from({ length: 50 }, () => chain.sample(row, { history: [1, 2, 3], rng }));
  };
  assert.deepEqual(run(42), run(42));
  assert.notDeepEqual(run(42), run(43));
});

test('top-k first, straight from the row, keeps what a full copy then top-k keeps (ties included)', () => {
  const row = Float32Array.from(randomRow(20000, 12), (v, i) => (i % 5 === 0 ? Math.round(v) : v));
  for (const k of [1, 8, 40, 20000, 30000]) {
    const direct = new Candidates(row.length).resetTop(row, k);
    const copied = new Candidates(row.length).reset(row);
    copied.keepTop(k);
    assert.equal(direct.size, copied.size, `k ${k}`);
    assert.deepEqual(Array.from(direct.ids.subarray(0, direct.size)), Array.from(copied.ids.subarray(0, copied.size)), `k ${k}`);
    assert.deepEqual(Array.from(direct.logits.subarray(0, direct.size)), Array.from(copied.logits.subarray(0, copied.size)), `k ${k}`);
  }
  // The chain's draws over that row are those of softmax(row / t) restricted to the k highest.
  const chain = new SamplerChain({ temperature: 0.5, topK: 3, topP: 1, minP: 0, repetitionPenalty: 1, repetitionWindow: 64 });
  const small = Float32Array.from([0.1, 2, -1, 1.5, 1.9, 0.3]);
  const kept = [1, 4, 3];
  const w = kept.map((id) => Math.exp(small[id] / 0.5));
  const z = w.reduce((a, b) => a + b, 0);
  const rng = new Prng(3);
  const counts = new Map<number, number>();
  const n = 40000;
  for (let i = 0; i < n; i++) {
    const id = chain.sample(small, { history: [], rng });
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  for (const [j, id] of kept.entries()) assert.ok(Math.abs((counts.get(id) ?? 0) / n - w[j] / z) < 0.01, `token ${id}`);
  assert.equal([...counts.keys()].filter((id) => !kept.includes(id)).length, 0);
  // The row itself is left as it was (its log-probabilities are read after sampling).
  assert.deepEqual(Array.from(small), Array.from(Float32Array.from([0.1, 2, -1, 1.5, 1.9, 0.3])));
});

test('draw follows the softmax distribution', () => {
  const row = Float32Array.from([Math.log(0.7), Math.log(0.2), Math.log(0.1)]);
  const c = new Candidates(3).reset(row);
  const rng = new Prng(9);
  const counts = [0, 0, 0];
  for (let i = 0; i < 20000; i++) counts[draw(c, rng.next())]++;
  assert.ok(Math.abs(counts[0] / 20000 - 0.7) < 0.02, `counts ${counts}`);
  assert.ok(Math.abs(counts[2] / 20000 - 0.1) < 0.02, `counts ${counts}`);
});

test('speculative verification emits tokens with exactly the chain distribution, whatever the draft', () => {
  const opts = { temperature: 0.7, topK: 4, topP: 1, minP: 0, repetitionPenalty: 1, repetitionWindow: 64 };
  const chain = new SamplerChain(opts);
  const row = Float32Array.from([1.0, 0.2, -0.5, 0.9, -3, 0.1]);
  // Expected: softmax(row / 0.7) over the top 4 (ids 0, 3, 1, 5).
  const kept = [0, 3, 1, 5];
  const w = kept.map((id) => Math.exp(row[id] / 0.7));
  const z = w.reduce((a, b) => a + b, 0);
  const rng = new Prng(11);
  const n = 60000;
  for (const draftId of [0, 5, 2]) {
    const counts = new Map<number, number>();
    let accepted = 0;
    for (let i = 0; i < n; i++) {
      const v = verifyDraft(chain, row, draftId, { history: [], rng });
      if (v.accepted) {
        accepted++;
        assert.equal(v.id, draftId);
      } else assert.notEqual(v.id, draftId, 'a rejected draft token is never its own replacement');
      counts.set(v.id, (counts.get(v.id) ?? 0) + 1);
    }
    kept.forEach((id, k) => {
      const got = (counts.get(id) ?? 0) / n;
      assert.ok(Math.abs(got - w[k] / z) < 0.01, `draft ${draftId}: token ${id} drawn ${got}, expected ${w[k] / z}`);
    });
    assert.equal(counts.get(2) ?? 0, 0, 'a token outside the top-k is never emitted, even as the draft');
    const pDraft = kept.includes(draftId) ? w[kept.indexOf(draftId)] / z : 0;
    assert.ok(Math.abs(accepted / n - pDraft) < 0.01, `draft ${draftId} accepted ${accepted / n}, expected ${pDraft}`);
  }
});

test('greedy verification keeps the draft token only when it is the argmax', () => {
  const chain = new SamplerChain({ temperature: 0, topK: 0, topP: 1, minP: 0, repetitionPenalty: 1, repetitionWindow: 64 });
  const row = Float32Array.from([0.5, 2, 1]);
  assert.deepEqual(verifyDraft(chain, row, 1, ctx()), { accepted: true, id: 1 });
  assert.deepEqual(verifyDraft(chain, row, 2, ctx()), { accepted: false, id: 1 });
});

test('copy bias: the token that followed the same 2-4 tokens before gains the bias; a lone token or no repeat changes nothing', async () => {
  const { copyBias, nextAfterRepeat } = await import('../../src/engine/decode/samplers/copyBias');
  // ... 5 6 7 [8] ... 5 6 7 -> 8 ; the longest match wins over a more recent shorter one.
  assert.equal(nextAfterRepeat([5, 6, 7, 8, 1, 6, 7, 9, 2, 5, 6, 7]), 8);
  assert.equal(nextAfterRepeat([1, 2, 3, 4, 9, 3, 4]), 9, 'a 2-gram');
  assert.equal(nextAfterRepeat([1, 2, 3, 9, 3]), -1, 'one token alone is not a copy');
  assert.equal(nextAfterRepeat([1, 2, 3, 4]), -1);
  const row = Float32Array.from([0, 1, 2, 3, 0.5, 0, 0, 0, 0, 0]);
  const chain = new SamplerChain({ temperature: 0, topK: 0, topP: 1, minP: 0, repetitionPenalty: 1, repetitionWindow: 256, copyBias: 3 });
  assert.equal(chain.describe(), 'copy_bias(3) -> argmax');
  assert.equal(chain.sample(row, ctx([4, 1, 2, 4, 1])), 2, 'the copied token 2 (logit 2 + 3) beats 3');
  assert.equal(chain.sample(row, ctx([7, 8, 9])), 3, 'nothing repeats: plain argmax');
  const c = new Candidates(row.length).reset(row);
  copyBias(1.5).apply(c, ctx([4, 1, 2, 4, 1]));
  assert.equal(c.logits[2], 3.5);
  // With top-k, the copied token enters the top set it was outside of.
  const sampled = new SamplerChain({ temperature: 0.2, topK: 1, topP: 1, minP: 0, repetitionPenalty: 1, repetitionWindow: 256, copyBias: 10 });
  assert.equal(sampled.sample(row, ctx([4, 1, 9, 4, 1])), 9 % row.length);
});
