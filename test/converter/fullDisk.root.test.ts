/**
 * The converter on a full disk: a small tmpfs as the parent of the output folder gives a real ENOSPC, not a
 * mock. Needs root to mount it: the "root" test tier, run by `npm test` and CI; `npm run test:unit` leaves it out.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { convertCheckpoint, PARTIAL_SUFFIX } from '../../src/converter/convert';
import { CHECKPOINTS, tempDir } from './checkpointFixtures';
import { copyFixture as copyFixtureUnder, expectRefused, type Fixture } from './refusal';

const root = tempDir('full-disk');
after(() => fs.rmSync(root, { recursive: true, force: true }));
let serial = 0;
const copyFixture = (name: Fixture) => copyFixtureUnder(root, name);

describe('full disk (a small tmpfs as the parent of out)', () => {
  /** Mounts a tmpfs of `opts` (e.g. "size=200k"): a real ENOSPC, not a mock. Needs root (as CI and the dev container run). */
  function withTmpfs(opts: string, fn: (dir: string) => Promise<void>): () => Promise<void> {
    return async () => {
      const dir = path.join(root, `tmpfs-${serial++}`);
      fs.mkdirSync(dir);
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir], { stdio: 'pipe' });
      } catch (err) {
        // Deliberately a failure, never a skip: a full-disk test that did not run must not look like a pass.
        assert.fail(
          `cannot mount a tmpfs for the full-disk test (needs root): ${(err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message}`,
        );
      }
      try {
        await fn(dir);
      } finally {
        execFileSync('umount', [dir]);
      }
    };
  }

  // Pages (tmpfs counts 4 KiB pages) each file of a complete q4 conversion of qwen2 takes, to end the disk at
  // each stage of the writing: the file named is the one that no longer fits.
  const PAGE = 4096;
  let pages: (file: string) => number;
  before(async () => {
    const r = await convertCheckpoint({ from: path.join(CHECKPOINTS, 'qwen2'), out: path.join(root, `sizes-${serial++}`), quant: 'q4' });
    pages = (file) => Math.ceil(fs.statSync(path.join(r.out, file)).size / PAGE);
  });
  const DATA = 'onnx/model_q4.onnx_data';
  const GRAPH = 'onnx/model_q4.onnx';
  // Written in this order: weights, graph, tokenizer.json, generation_config.json, tokenizer_config.json, config.json.
  const stages: [string, () => number][] = [
    ['model_q4.onnx_data', () => 50],
    ['model_q4.onnx', () => pages(DATA) + 1],
    ['tokenizer.json', () => pages(DATA) + pages(GRAPH) + 1],
    ['config.json', () => pages(DATA) + pages(GRAPH) + pages('tokenizer.json') + pages('generation_config.json') + pages('tokenizer_config.json')],
  ];
  for (const [file, budget] of stages) {
    test(`disk full while writing ${file}`, async (t) => {
      await withTmpfs(`size=${budget() * 4}k`, async (dir) => {
        const from = copyFixture('qwen2');
        const out = path.join(dir, 'model');
        const err = await expectRefused(from, out, 'q4', { file: out + PARTIAL_SUFFIX, says: /cannot be written: the disk is full/ });
        assert.equal(path.basename(err.file), file, err.message);
        t.diagnostic(err.message.replace(root, '<tmp>'));
        assert.deepEqual(fs.readdirSync(dir), [], 'the tmpfs is empty again');
      })();
    });
  }
  test(
    'no inodes left for the work folder',
    withTmpfs('size=1m,nr_inodes=2', async (dir) => {
      const from = copyFixture('qwen2');
      const out = path.join(dir, 'model');
      const err = await expectRefused(from, out, 'q4', { file: out + PARTIAL_SUFFIX, says: /cannot be written: the disk is full/ });
      assert.deepEqual(fs.readdirSync(dir), [], `the tmpfs is empty again (${err.message})`);
    }),
  );
});
