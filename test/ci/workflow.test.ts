/**
 * .github/workflows/ci.yml cannot run here: it is checked against GitHub's workflow schema (action-validator),
 * and every command it runs is checked to exist, so that a renamed script breaks this test and not the matrix.
 * Its native-report step also runs here, for every target.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../helpers';

const WORKFLOW = path.join(ROOT, '.github', 'workflows', 'ci.yml');
const VALIDATOR = path.join(ROOT, 'node_modules', '@action-validator', 'cli', 'cli.mjs');
const { TARGETS } = require(path.join(ROOT, 'scripts', 'vsix-targets.js')) as { TARGETS: Record<string, unknown> };

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  if?: string;
}
interface Workflow {
  jobs: Record<string, { strategy: { matrix: { include: { os: string; target: string }[] } }; steps: Step[] }>;
}
const workflow = parse(fs.readFileSync(WORKFLOW, 'utf8')) as Workflow;
const job = workflow.jobs.platform;

const validate = (file: string) => spawnSync(process.execPath, [VALIDATOR, file], { encoding: 'utf8' });

test('the workflow is valid against the workflow schema, and the validator does reject a broken one', () => {
  const ok = validate(WORKFLOW);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-workflow-')), 'ci.yml');
  fs.writeFileSync(broken, fs.readFileSync(WORKFLOW, 'utf8').replace('timeout-minutes: 45', 'timeout-minutes: soon'));
  assert.equal(validate(broken).status, 1);
  fs.rmSync(path.dirname(broken), { recursive: true });
});

test('the matrix has a real runner for every platform Ghostline ships a package for', () => {
  const targets = job.strategy.matrix.include.map((m) => m.target).sort();
  assert.deepEqual(targets, Object.keys(TARGETS).sort());
  const runners = new Map(job.strategy.matrix.include.map((m) => [m.target, m.os]));
  assert.match(String(runners.get('linux-arm64')), /arm/);
  assert.match(String(runners.get('win32-arm64')), /arm/);
  assert.match(String(runners.get('darwin-arm64')), /^macos/);
});

test('every command the workflow runs exists: npm scripts, node scripts, the integration grep', () => {
  const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const runs = job.steps.flatMap((s) => (s.run ? [s.run] : []));
  assert.ok(runs.length >= 5);
  for (const run of runs) {
    for (const m of run.matchAll(/npm run ([\w:-]+)/g)) assert.ok(scripts[m[1]], `npm run ${m[1]} is not a script`);
    for (const m of run.matchAll(/node (scripts\/[\w.-]+\.js)/g)) assert.ok(fs.existsSync(path.join(ROOT, m[1])), `${m[1]} does not exist`);
  }
  const smoke = runs.find((r) => r.includes('run-integration.js'));
  assert.ok(smoke, 'no platform smoke step');
  const grep = /--grep '([^']+)'/.exec(smoke)?.[1];
  assert.ok(grep && new RegExp(grep).test('platform.itest > platform: x'), 'the smoke grep selects no platform test');
  assert.ok(fs.existsSync(path.join(ROOT, 'test', 'integration', 'platform.itest.ts')));
});

for (const target of Object.keys(TARGETS)) {
  test(`the native-report step runs here for ${target}`, () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'native-report.js'), '--target', target], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const req = JSON.parse(/^requirements: (.*)$/m.exec(r.stdout)?.[1] ?? '{}');
    assert.equal(req.target, target);
    if (target.startsWith('darwin')) assert.match(String(req.minMacOS), /^\d+\.\d+/);
    if (target.startsWith('win32')) assert.ok(req.vcRuntimeDlls.length > 0);
    if (target.startsWith('linux')) assert.match(String(req.glibc), /^2\.\d+$/);
  });
}
