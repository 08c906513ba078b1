// A tiny test registry and runner for the integration suite, which runs inside a real VS Code extension host
// (code-server or @vscode/test-electron): no mocha, no dependencies, no `vscode` import here.
//
//   import { test, assert } from './harness';
//   test('does something', async () => { ... });
//   test.skip('not yet', async () => { ... });
//
// Tests run one after the other in registration order (files sorted by name). Each gets a timeout
// (default 60 s, GHOSTLINE_TEST_TIMEOUT_MS, or per test). Hooks: before/after (once per file, around that
// file's tests) and afterEach (per file).
import * as fs from 'node:fs';
import * as path from 'node:path';

export { strict as assert } from 'node:assert';

export type TestFn = () => unknown | Promise<unknown>;

export interface TestOptions {
  timeoutMs?: number;
  skip?: boolean | string;
  only?: boolean;
}

interface TestCase extends TestOptions {
  name: string;
  file: string;
  fn: TestFn;
}

interface FileHooks {
  before: TestFn[];
  after: TestFn[];
  afterEach: TestFn[];
}

export interface TestResult {
  name: string;
  file: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  error?: string;
}

export interface RunSummary {
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  results: TestResult[];
}

const registry: TestCase[] = [];
const hooks = new Map<string, FileHooks>();
let currentFile = '(unknown)';

/** Set by the runner before it loads each test module, so tests and hooks know their file. */
export function setCurrentFile(file: string): void {
  currentFile = file;
}

function hooksOf(file: string): FileHooks {
  let h = hooks.get(file);
  if (!h) {
    h = { before: [], after: [], afterEach: [] };
    hooks.set(file, h);
  }
  return h;
}

interface TestApi {
  (name: string, fn: TestFn, opts?: TestOptions): void;
  skip(name: string, fn: TestFn, opts?: TestOptions): void;
  only(name: string, fn: TestFn, opts?: TestOptions): void;
}

export const test: TestApi = Object.assign(
  (name: string, fn: TestFn, opts: TestOptions = {}): void => {
    registry.push({ name, fn, file: currentFile, ...opts });
  },
  {
    skip: (name: string, fn: TestFn, opts: TestOptions = {}): void => test(name, fn, { ...opts, skip: opts.skip || true }),
    only: (name: string, fn: TestFn, opts: TestOptions = {}): void => test(name, fn, { ...opts, only: true }),
  },
);

export function before(fn: TestFn): void {
  hooksOf(currentFile).before.push(fn);
}
export function after(fn: TestFn): void {
  hooksOf(currentFile).after.push(fn);
}
export function afterEach(fn: TestFn): void {
  hooksOf(currentFile).afterEach.push(fn);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it returns a truthy value (returned) or the time is up (throws with `what`). */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > end) {
      const tail = lastError ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${tail}`);
    }
    await sleep(intervalMs);
  }
}

function withTimeout(fn: TestFn, ms: number, label: string): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([Promise.resolve().then(fn), timeout]).finally(() => clearTimeout(timer));
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.stack || `${err.name}: ${err.message}`;
  return String(err);
}

export interface RunOptions {
  /** Only tests whose "file > name" matches. */
  grep?: RegExp;
  /** Where to write the JSON summary. */
  resultsFile?: string;
  defaultTimeoutMs?: number;
  log?: (line: string) => void;
}

/** Runs every registered test in order; never throws (the caller decides what failures mean). */
export async function runRegistered(opts: RunOptions = {}): Promise<RunSummary> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const defaultTimeout = opts.defaultTimeoutMs ?? 60_000;
  const hasOnly = registry.some((t) => t.only);
  const selected = registry.filter((t) => (!hasOnly || t.only) && (!opts.grep || opts.grep.test(`${t.file} > ${t.name}`)));
  const results: TestResult[] = [];
  const t0 = Date.now();
  const files = [...new Set(selected.map((t) => t.file))];

  for (const file of files) {
    const h = hooksOf(file);
    const tests = selected.filter((t) => t.file === file);
    log(`# ${file}`);
    let hookError: string | undefined;
    for (const fn of h.before) {
      try {
        await withTimeout(fn, defaultTimeout, 'before hook');
      } catch (err) {
        hookError = `before hook failed: ${describeError(err)}`;
        break;
      }
    }
    for (const t of tests) {
      const start = Date.now();
      if (t.skip) {
        results.push({ name: t.name, file, status: 'skipped', durationMs: 0, error: typeof t.skip === 'string' ? t.skip : undefined });
        log(`  - skip ${t.name}${typeof t.skip === 'string' ? ` (${t.skip})` : ''}`);
        continue;
      }
      let error = hookError;
      if (!error) {
        try {
          await withTimeout(t.fn, t.timeoutMs ?? defaultTimeout, t.name);
        } catch (err) {
          error = describeError(err);
        }
        for (const fn of h.afterEach) {
          try {
            await withTimeout(fn, defaultTimeout, 'afterEach hook');
          } catch (err) {
            error = error ?? `afterEach hook failed: ${describeError(err)}`;
          }
        }
      }
      const durationMs = Date.now() - start;
      if (error) {
        results.push({ name: t.name, file, status: 'failed', durationMs, error });
        log(`  not ok ${t.name} (${durationMs} ms)\n${error.replace(/^/gm, '      ')}`);
      } else {
        results.push({ name: t.name, file, status: 'passed', durationMs });
        log(`  ok ${t.name} (${durationMs} ms)`);
      }
    }
    for (const fn of h.after) {
      try {
        await withTimeout(fn, defaultTimeout, 'after hook');
      } catch (err) {
        results.push({ name: '(after hook)', file, status: 'failed', durationMs: 0, error: describeError(err) });
        log(`  not ok (after hook)\n${describeError(err).replace(/^/gm, '      ')}`);
      }
    }
  }

  const summary: RunSummary = {
    passed: results.filter((r) => r.status === 'passed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    durationMs: Date.now() - t0,
    results,
  };
  if (selected.length === 0) {
    summary.failed++;
    summary.results.push({ name: '(no tests selected)', file: '', status: 'failed', durationMs: 0, error: 'no tests matched' });
  }
  log(`# ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped (${summary.durationMs} ms)`);
  if (opts.resultsFile) {
    fs.mkdirSync(path.dirname(opts.resultsFile), { recursive: true });
    fs.writeFileSync(opts.resultsFile, `${JSON.stringify(summary, null, 2)}\n`);
  }
  return summary;
}
