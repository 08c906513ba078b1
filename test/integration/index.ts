// Entry point of the integration suite: `run()` is called inside a real VS Code extension host (code-server
// through scripts/run-integration.js, or @vscode/test-electron with --electron). It loads every
// `*.itest.js` module next to this file (and in subfolders), which register tests with ./harness, runs them
// one by one, writes a JSON summary, and throws if any failed (that becomes the exit code).
//
// Environment (set by scripts/run-integration.js; they reach the extension host):
//   GHOSTLINE_TEST_RESULTS     where to write the JSON summary (default: <workspace>/.ghostline-test-results.json)
//   GHOSTLINE_TEST_GREP        only run tests whose "file > name" matches this regular expression
//   GHOSTLINE_TEST_TIMEOUT_MS  default timeout per test (60000)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { runRegistered, setCurrentFile } from './harness';

function findTestModules(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'workspace') findTestModules(p, out);
    } else if (e.name.endsWith('.itest.js')) {
      out.push(p);
    }
  }
  return out;
}

function resultsFile(): string {
  if (process.env.GHOSTLINE_TEST_RESULTS) return process.env.GHOSTLINE_TEST_RESULTS;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (folder && folder.uri.scheme === 'file') return path.join(folder.uri.fsPath, '.ghostline-test-results.json');
  return path.join(os.tmpdir(), 'ghostline-test-results.json');
}

export async function run(): Promise<void> {
  const log = (line: string): void => console.log(`[ghostline-itest] ${line.replace(/\n/g, '\n[ghostline-itest] ')}`);
  const modules = findTestModules(__dirname).sort();
  for (const file of modules) {
    setCurrentFile(path.relative(__dirname, file).replace(/\.js$/, ''));
    require(file);
  }
  const grep = process.env.GHOSTLINE_TEST_GREP ? new RegExp(process.env.GHOSTLINE_TEST_GREP) : undefined;
  const timeout = Number(process.env.GHOSTLINE_TEST_TIMEOUT_MS) || undefined;
  const out = resultsFile();
  log(`${modules.length} test file(s); VS Code ${vscode.version}; results: ${out}`);
  const summary = await runRegistered({ grep, resultsFile: out, defaultTimeoutMs: timeout, log });
  if (summary.failed > 0) {
    throw new Error(`${summary.failed} integration test(s) failed`);
  }
}
