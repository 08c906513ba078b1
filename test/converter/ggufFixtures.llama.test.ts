/**
 * The GGUF fixtures (test/fixtures/gguf, written by tools/model/export_gguf.py) are what llama.cpp reads: llama-server
 * runs each F32 file, given the fixture's prompt as token ids, and decodes greedily the tokens PyTorch decoded from
 * the checkpoint (reference.json; the fixtures' greedy paths keep a margin, so float rounding cannot flip them).
 * gguf.test.ts then shows Ghostline reads the same files into the same model: both ends are anchored in
 * llama.cpp, not only in our own writer.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';
import { checkpointReference } from './checkpointFixtures';

const { startLlamaServer } = require(path.join(ROOT, 'scripts', 'llama-server.js')) as {
  startLlamaServer: (o: { model: string; contextSize?: number }) => Promise<{ url: string; stop: () => Promise<void> }>;
};

for (const [file, checkpoint] of [
  ['qwen2-f32.gguf', 'qwen2'],
  ['llama-f32.gguf', 'llama'],
  ['llama-untied-f32.gguf', 'llama-untied'],
  ['starcoder2-f32.gguf', 'starcoder2'],
] as const) {
  test(`llama-server runs ${file} to the PyTorch reference's greedy tokens`, async () => {
    const ref = checkpointReference(checkpoint);
    const server = await startLlamaServer({ model: path.join(ROOT, 'test', 'fixtures', 'gguf', file), contextSize: 512 });
    try {
      const res = await fetch(`${server.url}/completion`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          prompt: ref.prompt_ids,
          n_predict: ref.greedy_ids.length,
          temperature: 0,
          top_k: 1,
          ignore_eos: true,
          cache_prompt: false,
          return_tokens: true,
        }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      const body = (await res.json()) as { tokens?: number[]; tokens_evaluated?: number };
      assert.equal(body.tokens_evaluated, ref.prompt_ids.length, 'the prompt ids as they are (no BOS added)');
      assert.deepEqual(body.tokens, ref.greedy_ids);
    } finally {
      await server.stop();
    }
  });
}
