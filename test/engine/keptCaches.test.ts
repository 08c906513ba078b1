import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PREFILL_ASIDE_CHUNK, PREFILL_ASIDE_OPTIONS } from '../../src/engine/shared/prefillAside';
import { Engine } from '../../src/engine/worker/engine';
import { TINY, TINY_FUSED } from '../helpers';

// Four files that share nothing past their first line: each prompt is well over KEPT_LIMITS.minDropped tokens.
const file = (name: string, body: string) =>
  `# ${name}.py\nimport os\nimport sys\n\n\ndef ${name}(items, limit=10):\n    """${body}"""\n    seen = set()\n    out = []\n    for item in items:\n        if item in seen:\n            continue\n        seen.add(item)\n        out.append(item)\n        if len(out) >= limit:\n            break\n    return out\n\n\ndef main():\n    print(${name}(sys.argv[1:]))\n`;
const A = file('unique_items', 'Keep the first occurrence of each item, up to a limit.');
const B = file('read_config', 'Read the settings file and return its values as a dictionary.');
const C = file('parse_args', 'Split the command line into flags and the remaining arguments.');
const D = file('walk_tree', 'Yield every path below the root, directories first.');

// The Hugging Face contract (immutable cache tensors) and the lean one (a store written in place).
for (const [contract, dir] of [
  ['hf', TINY],
  ['lean', TINY_FUSED],
] as const) {
  describe(`kept caches, ${contract} contract`, () => {
    let engine: Engine;
    before(async () => {
      engine = await Engine.load(dir, { threads: 1, prefillChunk: 16 });
    });
    after(async () => engine.dispose());

    test('the prompts differ from their first lines on and each is long enough to be kept', () => {
      for (const p of [A, B, C, D]) assert.ok(engine.tokenize(p).length > 100);
      assert.ok(engine.tokenize(A).findIndex((t, i) => t !== engine.tokenize(B)[i]) < 10);
    });

    test('coming back to a prompt after another file reuses its kept cache and writes what a cold run writes', async () => {
      engine.resetCache();
      const first = await engine.generate(A, { maxNewTokens: 8 });
      const other = await engine.generate(B, { maxNewTokens: 8 });
      assert.ok(other.stats.reusedTokens < 10, `reused ${other.stats.reusedTokens}`);
      assert.equal(engine.keptTokenIds.length, 1);
      const back = await engine.generate(`${A}\n`, { maxNewTokens: 8 });
      assert.ok(back.stats.reusedTokens >= first.stats.promptTokens - 2, `reused ${back.stats.reusedTokens} of ${back.stats.promptTokens}`);
      assert.ok(back.stats.prefillTokens <= 3);
      // The other file's cache was kept in turn, and is as good.
      const otherBack = await engine.generate(B, { maxNewTokens: 8 });
      assert.equal(otherBack.stats.prefillTokens, 1);
      assert.deepEqual(otherBack.tokens, other.tokens);
      engine.resetCache();
      const cold = await engine.generate(`${A}\n`, { maxNewTokens: 8 });
      assert.deepEqual(back.tokens, cold.tokens);
    });

    test('a prompt that drops only a few tokens of the cache continues it in place: nothing is kept', async () => {
      engine.resetCache();
      await engine.generate(A, { maxNewTokens: 8 });
      const edited = await engine.generate(`${A.slice(0, -12)}print(os.getcwd())\n`, { maxNewTokens: 8 });
      assert.ok(edited.stats.prefillTokens < 20, `prefilled ${edited.stats.prefillTokens}`);
      assert.equal(engine.keptTokenIds.length, 0);
    });

    test('a prompt abandoned while prefilling leaves the cache it started from whole', async () => {
      engine.resetCache();
      const first = await engine.generate(A, { maxNewTokens: 4 });
      const ac = new AbortController();
      // The shared head, then another body: cancelled after its first chunk of 16 tokens.
      const diverging = `${A.slice(0, 40)}${C}`;
      const cancelled = await engine.generate(
        diverging,
        { maxNewTokens: 4 },
        { signal: ac.signal, onText: () => undefined, onStart: () => setImmediate(() => ac.abort()) },
      );
      assert.equal(cancelled.finishReason, 'cancelled');
      const back = await engine.generate(A, { maxNewTokens: 4 });
      assert.equal(back.stats.prefillTokens, 1);
      assert.deepEqual(back.tokens, first.tokens);
    });

    test('a warm-up that keystrokes interrupt goes on from where it stopped (a changed context read over several pauses)', async () => {
      engine.resetCache();
      // The file's prompt behind a context block, and the same prompt behind a changed block: what a warm-up reads.
      const context = (name: string) => `# lib/${name}.py\ndef ${name}(value, scale=2):\n    return value * scale\n\n`;
      const old = `${context('scale_old')}${A}`;
      const changed = `${context('scale_new')}${A}`;
      await engine.generate(old, { maxNewTokens: 4 });
      const interrupted = (prompt: string) => {
        const ac = new AbortController();
        return engine.generate(prompt, PREFILL_ASIDE_OPTIONS, {
          signal: ac.signal,
          prefillChunk: PREFILL_ASIDE_CHUNK,
          onStart: () => setImmediate(() => ac.abort()),
        });
      };
      const first = await interrupted(changed);
      assert.equal(first.finishReason, 'cancelled');
      // A keystroke in between, on the context the cache holds: it continues the old prompt's kept cache.
      const key = await engine.generate(`${old}\n`, { maxNewTokens: 4 });
      assert.ok(key.stats.prefillTokens <= 4, `the keystroke prefilled ${key.stats.prefillTokens}`);
      const second = await interrupted(changed);
      const whole = await engine.prefillAside(changed).then(() => engine.generate(changed, { maxNewTokens: 4 }));
      const shared = engine.tokenize(old).findIndex((t, i) => t !== engine.tokenize(changed)[i]);
      assert.ok(second.stats.reusedTokens >= shared + PREFILL_ASIDE_CHUNK, `the second warm-up reused ${second.stats.reusedTokens} (shared head ${shared})`);
      assert.equal(whole.stats.prefillTokens, 1, 'once the warm-ups are done, the changed prompt is in a cache');
    });

    test('only the most recent prompts are kept', async () => {
      engine.resetCache();
      for (const p of [A, B, C, D]) await engine.generate(p, { maxNewTokens: 4 });
      const kept = engine.keptTokenIds;
      assert.equal(kept.length, 2);
      const head = (p: string) => engine.tokenize(p).slice(0, 60);
      assert.deepEqual(kept[0].slice(0, 60), head(B));
      assert.deepEqual(kept[1].slice(0, 60), head(C));
      const again = await engine.generate(A, { maxNewTokens: 4 });
      assert.ok(again.stats.reusedTokens < 10, 'the oldest was let go');
    });
  });
}
