/**
 * A tokenizer.json whose pre-tokenizer backtracks without end is refused with a message, in a thread that is
 * stopped, and never run where it would stall: the worker's load, the CLI, the extension host's server
 * tokenizer. Every real tokenizer Ghostline has (the shipped model's and the families' fixtures: Qwen2.5-Coder,
 * SmolLM2, DeepSeek-Coder, StarCoder2, llama) passes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { describeProbeText, probeTexts, probeTokenizer } from '../../src/engine/model/tokenizerProbe';
import { ModelFolderError } from '../../src/engine/shared/errors';
import { compareServerTokenizer } from '../../src/servers/serverTokenizer';
import { copyModel, ROOT } from '../helpers';

const MODEL = defaultModelDir(ROOT);
const CLI = path.join(ROOT, 'dist', 'cli.js');

/** The shipped model's folder with `(a|aa)+$` before its pre-tokenizer's pattern: a run of "a"s never ends. */
function hostileModel(): string {
  const dir = copyModel(MODEL);
  const file = path.join(dir, 'tokenizer.json');
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const split = json.pre_tokenizer.pretokenizers[0];
  assert.equal(split.type, 'Split');
  split.pattern.Regex = `(a|aa)+$|${split.pattern.Regex}`;
  fs.writeFileSync(file, JSON.stringify(json));
  return dir;
}

function tokenizerDirs(): string[] {
  const fixtures = path.join(ROOT, 'test', 'fixtures');
  const found: string[] = [MODEL];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (e.name === 'tokenizer.json') found.push(dir);
    }
  };
  walk(fixtures);
  return found;
}

test('every real tokenizer passes the check', async () => {
  const dirs = tokenizerDirs();
  assert.ok(dirs.length >= 8, dirs.join(', '));
  for (const dir of dirs) await probeTokenizer(dir);
});

test('the probe texts: runs of each character class, short and line-long, named in words', () => {
  const texts = probeTexts();
  assert.ok(texts.includes('a'.repeat(64)) && texts.includes(`${' '.repeat(2048)}!`));
  assert.equal(describeProbeText(`${'a'.repeat(64)}!`), 'a line of 64 characters ("a" repeated, then "!")');
});

test('a pre-tokenizer that backtracks without end: refused at the deadline, naming the file and the text', async () => {
  const dir = hostileModel();
  try {
    const err = await probeTokenizer(dir, { deadlineMs: 5000 }).then(
      () => assert.fail('the probe passed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ModelFolderError, String(err));
    assert.equal(err.file, path.join(dir, 'tokenizer.json'));
    assert.match(err.message, /encoding and decoding a line of 64 characters \("a" repeated, then "!"\) did not finish within 5 s/);
    assert.match(err.message, /backtracks/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a tokenizer.json that is no tokenizer: the library's own error, at once", async () => {
  const dir = copyModel(MODEL);
  try {
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify({ model: { type: 'NoSuchModel' } }));
    await assert.rejects(probeTokenizer(dir), (e: unknown) => e instanceof ModelFolderError && /the tokenizer cannot be used/.test(e.message));
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), '[1, 2]');
    await assert.rejects(probeTokenizer(dir), /must hold a JSON object/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the CLI (worker load) and the server tokenizer check refuse the stalling tokenizer with that message', async () => {
  const dir = hostileModel();
  try {
    // Encoding this prompt with the tokenizer would never end: the check must stop the load first.
    const r = spawnSync(process.execPath, [CLI, 'generate', '--model', dir, '--prompt', `x = "${'a'.repeat(64)}`, '--max-new-tokens', '2', '--device', 'cpu'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.notEqual(r.status, 0, r.stdout);
    assert.match(r.stderr, /tokenizer\.json: encoding and decoding a line of 64 characters \("a" repeated, then "!"\) did not finish within \d+ s/);

    // The extension host never builds it: the server is compared as unchecked, and nothing is sent to it.
    const c = await compareServerTokenizer({ kind: 'llama.cpp', url: 'http://127.0.0.1:9', timeoutMs: 1000 }, dir);
    assert.equal(c.check.verdict, 'unchecked');
    assert.match(c.check.message, /backtracks/);
    assert.deepEqual(c.setup, {});
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
