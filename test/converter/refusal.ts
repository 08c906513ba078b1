/** What the converter's refusal tests share: private copies of the checkpoint fixtures, and the refusal checks. */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { convertCheckpoint, PARTIAL_SUFFIX } from '../../src/converter/convert';
import { ConvertError } from '../../src/converter/errors';
import type { Quant } from '../../src/converter/types';
import { CHECKPOINTS } from './checkpointFixtures';

export type Fixture = 'qwen2' | 'llama' | 'llama-untied' | 'starcoder2';

let serial = 0;

/** A private copy of a checkpoint fixture (weights included) under `root`, for breaking. */
export function copyFixture(root: string, name: Fixture): string {
  const dir = path.join(root, `${serial++}-${name}`);
  fs.mkdirSync(dir);
  for (const f of fs.readdirSync(path.join(CHECKPOINTS, name))) {
    if (f !== 'reference.json') fs.copyFileSync(path.join(CHECKPOINTS, name, f), path.join(dir, f));
  }
  return dir;
}

/** Nothing that could pass for a model: neither the folder nor its work-in-progress twin. */
export function assertNothingLeft(out: string): void {
  assert.ok(!fs.existsSync(out), `${out} was left behind`);
  assert.ok(!fs.existsSync(out + PARTIAL_SUFFIX), `${out + PARTIAL_SUFFIX} was left behind`);
}

export interface Expect {
  /** The file the message must name (absolute). */
  file: string;
  /** The tensor it must name, quoted. */
  tensor?: string;
  /** What is wrong, in words. */
  says: RegExp;
}

export async function expectRefused(from: string, out: string, quant: Quant, e: Expect): Promise<ConvertError> {
  let caught: unknown;
  try {
    await convertCheckpoint({ from, out, quant });
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, 'the conversion succeeded');
  const err = caught as Error;
  assert.ok(err instanceof ConvertError, `not a ConvertError: ${err.stack}`);
  assert.ok(err.message.includes(e.file), `the message does not name ${e.file}:\n  ${err.message}`);
  if (e.tensor) assert.ok(err.message.includes(`"${e.tensor}"`), `the message does not name tensor "${e.tensor}":\n  ${err.message}`);
  assert.match(err.message, e.says);
  assertNothingLeft(out);
  return err;
}
