import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../helpers';

export const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'repo-context');

/**
 * Compares `actual` with the golden file `name` under test/fixtures/repo-context/goldens (written, not compared,
 * when GHOSTLINE_UPDATE_GOLDENS=1: then read the diff before committing it).
 */
export function matchGolden(name: string, actual: unknown): void {
  const file = path.join(FIXTURES, 'goldens', name);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.GHOSTLINE_UPDATE_GOLDENS === '1') {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return;
  }
  assert.ok(fs.existsSync(file), `no golden ${name}: run with GHOSTLINE_UPDATE_GOLDENS=1 to write it`);
  assert.deepEqual(JSON.parse(text), JSON.parse(fs.readFileSync(file, 'utf8')), `differs from the golden ${name}`);
}
