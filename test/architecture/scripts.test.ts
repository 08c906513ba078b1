/**
 * The npm scripts as a newcomer finds them: one naming scheme (`group:name`), every benchmark, evaluation and
 * generation step run from a `bench/<name>Main.ts` entry point named after its script, and every one of them
 * in bench/README.md's table. A script added without its row, or an entry point nothing runs, fails here.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
const BENCH = path.join(ROOT, 'bench');

/** Lifecycle verbs stand alone; everything else is `group:name`, the group saying what kind of job it is. */
const BARE = new Set(['start', 'test', 'build', 'typecheck', 'lint', 'format', 'package', 'bench']);
const GROUPS = ['test', 'setup', 'bench', 'eval', 'gen'];
/** The groups whose scripts measure or generate something: documented in bench/README.md. */
const MEASURED = ['bench', 'eval', 'gen'];

const group = (name: string) => name.split(':')[0];
const isMeasured = (name: string) => name.includes(':') && MEASURED.includes(group(name));
/** The bench/*.js files a script runs, without the extension. */
const entriesOf = (command: string) => [...command.matchAll(/node out\/bench\/([\w/]+)\.js/g)].map((m) => m[1]);
const camel = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

test('every npm script follows one scheme: a lifecycle verb, or group:kebab-name', () => {
  for (const name of Object.keys(scripts)) {
    if (BARE.has(name)) continue;
    const [g, ...rest] = name.split(':');
    assert.ok(GROUPS.includes(g), `${name}: the group ${g} is not one of ${GROUPS.join(', ')}`);
    for (const part of rest) assert.match(part, /^[a-z0-9]+(-[a-z0-9]+)*$/, `${name}: kebab-case after the group`);
  }
});

test('a benchmark, evaluation or generation step runs bench/<name>Main.ts, named after its script', () => {
  for (const [name, command] of Object.entries(scripts)) {
    const entries = entriesOf(command);
    if (!isMeasured(name)) continue;
    assert.ok(entries.length > 0, `${name} runs no bench entry point: ${command}`);
    for (const e of entries) {
      assert.match(e, /Main$/, `${name}: out/bench/${e}.js is an entry point, so its name ends in Main`);
      assert.ok(fs.existsSync(path.join(BENCH, `${e}.ts`)), `${name}: bench/${e}.ts does not exist`);
    }
    // One entry point: its name is the script's own (bench:pause-latency runs pauseLatencyMain).
    if (entries.length === 1) assert.equal(entries[0], `${camel(name.split(':')[1])}Main`, `${name}'s entry point`);
  }
  assert.deepEqual(entriesOf(scripts.bench), ['run'], 'npm run bench runs the suite, bench/run.ts');
});

test('every bench entry point is run by a script, and none is imported as a module', () => {
  const run = new Set(Object.values(scripts).flatMap(entriesOf));
  const mains = fs.readdirSync(BENCH).filter((f) => /Main\.ts$/.test(f));
  assert.ok(mains.length > 10, `found ${mains.length} entry points`);
  for (const f of mains) assert.ok(run.has(f.replace(/\.ts$/, '')), `bench/${f}: no npm script runs it`);
  // An entry point runs its job when loaded: a module that imports one would start a benchmark.
  const sources = fs.readdirSync(BENCH, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const f of sources) {
    const text = fs.readFileSync(path.join(BENCH, f), 'utf8');
    const imported = [...text.matchAll(/from '\.{1,2}\/(?:[\w/]*\/)?(\w+Main)'/g)].map((m) => m[1]);
    assert.deepEqual(imported, [], `bench/${f} imports an entry point`);
  }
});

test("bench/README.md's table lists every benchmark, evaluation and generation script once, and no other", () => {
  const readme = fs.readFileSync(path.join(BENCH, 'README.md'), 'utf8');
  const rows = [...readme.matchAll(/^\| `([\w:-]+)[^`]*` +\|/gm)].map((m) => m[1]);
  const measured = Object.keys(scripts).filter(isMeasured);
  for (const name of measured) assert.equal(rows.filter((r) => r === name).length, 1, `${name}: one row in the table`);
  for (const r of rows) assert.ok(r in scripts, `the table lists ${r}, which package.json does not have`);
  assert.ok(rows.includes('bench'), 'the suite itself has a row');
});
