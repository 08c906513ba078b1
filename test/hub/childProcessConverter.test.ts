import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { ConvertProgress } from '../../src/converter/types';
import { childProcessConverter, ConverterProcessError } from '../../src/hub/childProcessConverter';
import { ROOT } from '../helpers';

/** The extension's converter: the CLI (`convert --progress-json`) in a child process, as tsc compiled it. */
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
const QWEN2 = path.join(ROOT, 'test', 'fixtures', 'checkpoints', 'qwen2');

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-child-convert-'));
}

test('converts in a child process, with progress and the result', async () => {
  const out = path.join(scratch(), 'model');
  const progress: ConvertProgress[] = [];
  const res = await childProcessConverter(CLI)({ from: QWEN2, out, onProgress: (p) => progress.push(p) });
  assert.equal(path.resolve(res.out), path.resolve(out));
  assert.equal(res.quant, 'q4');
  assert.ok(fs.existsSync(path.join(out, 'onnx', 'model_q4.onnx')));
  assert.ok(progress.length > 0 && progress[progress.length - 1].doneBytes === progress[progress.length - 1].totalBytes, JSON.stringify(progress.slice(-2)));
});

test("the converter's error message comes back; a cancel kills the child", async () => {
  const empty = scratch();
  await assert.rejects(
    childProcessConverter(CLI)({ from: empty, out: path.join(scratch(), 'model') }),
    (e: Error) => e instanceof ConverterProcessError && /config\.json/.test(e.message) && !/^ghostline:/.test(e.message),
  );
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(childProcessConverter(CLI)({ from: QWEN2, out: path.join(scratch(), 'model'), signal: ac.signal }), /cancelled/);
  const later = new AbortController();
  const p = childProcessConverter(CLI)({ from: QWEN2, out: path.join(scratch(), 'model'), signal: later.signal });
  setTimeout(() => later.abort(), 5);
  await assert.rejects(p, /cancelled/);
  await assert.rejects(
    childProcessConverter(path.join(scratch(), 'no-such-cli.js'))({ from: QWEN2, out: path.join(scratch(), 'model') }),
    ConverterProcessError,
  );
});
