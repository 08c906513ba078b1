/** `ghostline prompt`: the prompt for a position of a workspace file, its context's sources, and one clear error for bad input. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';
import { FIXTURES } from '../completion/repo/goldens';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const TS = path.join(FIXTURES, 'ts');

function prompt(...args: string[]) {
  return spawnSync(process.execPath, [CLI, 'prompt', ...args], { encoding: 'utf8' });
}

test('prompt --json: the prompt in the bundled model layout, with the declarations the cursor line needs from other files', () => {
  const r = prompt('--workspace', TS, '--file', 'src/main.ts', '--line', '9', '--character', '16', '--json');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { prompt: string; context: { source: string; path: string; text: string }[] };
  const checksum = out.context.find((c) => c.path === 'src/checksums.ts');
  assert.equal(checksum?.source, 'imports');
  assert.match(checksum.text, /export function computeChecksumValue\(data: Uint8Array\): number/);
  assert.ok(out.prompt.startsWith('<file_sep>'), 'context first, behind a file separator');
  assert.ok(out.prompt.indexOf('<file_sep>src/checksums.ts\n') < out.prompt.indexOf('<file_sep>src/main.ts\n<fim_prefix>'), 'the current file last');
  const plain = prompt('--workspace', TS, '--file', 'src/main.ts', '--line', '9', '--character', '16', '--sources', 'none', '--json');
  assert.deepEqual(JSON.parse(plain.stdout).context, []);
});

test("prompt --json from the bundle: an import mapped by the project's tsconfig paths (comments in it) brings its declarations", () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-prompt-paths-'));
  try {
    fs.mkdirSync(path.join(ws, 'src', 'money'), { recursive: true });
    fs.writeFileSync(
      path.join(ws, 'tsconfig.json'),
      '{\n  // aliases\n  "compilerOptions": { "baseUrl": ".", "paths": { "#money/*": ["src/money/*"] } },\n}\n',
    );
    fs.writeFileSync(
      path.join(ws, 'src', 'money', 'rates.ts'),
      'export function convertAmount(cents: number, rate: number): number {\n  return cents * rate;\n}\n',
    );
    fs.writeFileSync(path.join(ws, 'src', 'app.ts'), "import { convertAmount } from '#money/rates';\n\nconst total = convertAmount(\n");
    const r = prompt('--workspace', ws, '--file', 'src/app.ts', '--line', '2', '--character', '27', '--json');
    assert.equal(r.status, 0, r.stderr);
    const found = (JSON.parse(r.stdout) as { context: { path: string; text: string }[] }).context.find((c) => c.path === 'src/money/rates.ts');
    assert.match(found?.text ?? '', /export function convertAmount\(cents: number, rate: number\): number/);
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test('prompt: bad input gets one clear message and exit code 2', () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-prompt-'));
  fs.writeFileSync(path.join(ws, 'blob.ts'), Buffer.from([1, 0, 2, 3]));
  fs.writeFileSync(path.join(ws, 'a.ts'), 'const a = 1;\nconst b = 2;\n');
  const cases: [string[], RegExp][] = [
    [['--workspace', ws, '--file', '../etc/passwd', '--line', '0', '--character', '0'], /outside the workspace/],
    [['--workspace', ws, '--file', 'blob.ts', '--line', '0', '--character', '0'], /binary file/],
    [['--workspace', ws, '--file', 'a.ts', '--line', '7', '--character', '0'], /--line 7 is past the end of a\.ts \(3 lines/],
    [['--workspace', ws, '--file', 'a.ts', '--line', '0', '--character', '40'], /--character 40 is past the end of line 0 \(12 characters\)/],
    [['--workspace', ws, '--file', 'a.ts', '--line', '-1', '--character', '0'], /--line must be a whole number/],
    [['--workspace', ws, '--file', 'missing.ts', '--line', '0', '--character', '0'], /does not exist/],
    [['--workspace', path.join(ws, 'nope'), '--file', 'a.ts', '--line', '0', '--character', '0'], /is not a folder/],
    [['--workspace', ws, '--file', 'a.ts', '--line', '0', '--character', '0', '--sources', 'telepathy'], /--sources takes/],
  ];
  for (const [args, message] of cases) {
    const r = prompt(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});
