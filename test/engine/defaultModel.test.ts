// The shipped default model: it loads, fits the size budget, carries its licence manifest and card, and the
// CLI (no --model) completes the two examples with plausible code at temperature 0.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { INLINE_PRESET, inlineDecodeOptions } from '../../src/completion/presets';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { Engine } from '../../src/engine/worker/engine';
import { ROOT } from '../helpers';

const MODEL = defaultModelDir(ROOT);
const CLI = path.join(ROOT, 'dist', 'cli.js');
let engine: Engine;

before(async () => {
  engine = await Engine.load(MODEL, { threads: 2 });
});
after(async () => engine.dispose());

function folderBytes(dir: string): number {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce((s, e) => s + (e.isDirectory() ? folderBytes(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);
}

test('the default model folder is complete and at most 25 MB', () => {
  for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'README.md']) {
    assert.ok(fs.existsSync(path.join(MODEL, f)), `${f} is shipped`);
  }
  const files = fs.readdirSync(MODEL);
  assert.ok(
    files.some((f) => /licen[cs]e|manifest/i.test(f)),
    'a licence manifest is shipped',
  );
  assert.ok(folderBytes(MODEL) <= 25 * 1024 * 1024, `${folderBytes(MODEL)} bytes`);
  assert.equal(pickFimTemplate(engine.info.specialTokens)?.family, 'starcoder', 'our FIM tokens');
});

function cli(prompt: string): string {
  const r = spawnSync(process.execPath, [CLI, 'generate', '--prompt', prompt, '--max-new-tokens', '24', '--temperature', '0', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).text as string;
}

test('the CLI without --model completes "def fibonacci(n):\\n    if n <" plausibly', () => {
  const first = cli('def fibonacci(n):\n    if n <').split('\n')[0];
  // A comparison operand and the colon that ends the if: " 2:", "= 1:", " 0:"...
  assert.match(first, /^\s*=?\s*[0-9n(]/, JSON.stringify(first));
  assert.match(first, /:\s*$/, JSON.stringify(first));
});

test('the CLI without --model completes "function add(a: number, b: number) {\\n  return" with a return expression', () => {
  // A 7M-parameter model: it writes a complete expression on a parameter (today "b.length;"),
  // not yet the sum; the model card and the issue note say so.
  const first = cli('function add(a: number, b: number) {\n  return').split('\n')[0];
  assert.match(first, /^\s+[^\s;]/, JSON.stringify(first));
  assert.match(first, /\b[ab]\b/, JSON.stringify(first));
  assert.match(first, /;\s*$/, JSON.stringify(first));
});

test('a cursor inside a word: the inline preset heals the token and finishes the word', async () => {
  for (const [prompt, rest] of [
    ['def area(r):\n    ret', /^urn\b/],
    ['import o', /^s\b/],
  ] as const) {
    const r = await engine.generate(prompt, inlineDecodeOptions(INLINE_PRESET, 'line', prompt.split('\n').pop() ?? ''));
    assert.match(r.text, rest, JSON.stringify({ prompt, text: r.text }));
  }
});

test('typing replay with the default model: each keystroke prefills a few tokens', async () => {
  const settings = { ...defaultCompletionSettings(), prefetch: false };
  const svc = new CompletionService(
    engine,
    () => pickFimTemplate(engine.info.specialTokens),
    () => settings,
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
  );
  const file = fs.readFileSync(path.join(ROOT, 'src', 'completion', 'completionService.ts'), 'utf8');
  const at = file.indexOf('  async complete(');
  const line = '  async complete(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionOutcome> {';
  const rest = file.slice(at + line.length);
  const fractions: number[] = [];
  let maxPrefill = 0;
  for (let i = 1; i <= line.length; i++) {
    const text = file.slice(0, at) + line.slice(0, i) + rest;
    const r = await svc.complete({
      doc: textSource(text),
      cursor: positionAt(text, at + i),
      languageId: 'typescript',
      path: 'completionService.ts',
      explicit: false,
    });
    if (r.source === 'model' && r.stats && i > 1) {
      fractions.push(r.stats.prefillTokens / r.stats.promptTokens);
      maxPrefill = Math.max(maxPrefill, r.stats.prefillTokens);
    }
  }
  assert.ok(fractions.length > 5, 'the model ran for most keystrokes');
  const median = [...fractions].sort((a, b) => a - b)[Math.floor(fractions.length / 2)];
  assert.ok(median < 0.05, `median prefilled share ${median}`);
  assert.ok(maxPrefill <= 4, `at most ${maxPrefill} tokens prefilled for one keystroke`);
});
