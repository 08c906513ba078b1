#!/usr/bin/env node
// npm run test:packaged -- [--target linux-x64,linux-arm64,win32-x64] [--vsix-dir DIR] [--json FILE]
//
// Runs what users install: each target's .vsix is unpacked and its own CLI (bundle, worker process, IPC, the
// packaged onnxruntime binding and library, the tree-sitter grammars, the bundled model) is run with Node for
// that platform: natively, linux-arm64 under qemu-user, win32-x64 under Wine (scripts/foreign-node.js).
// Per target:
//   1. serve-stdio, one session: the next-token distribution (top 5, teacher-forced) and a greedy continuation
//      of a few prompts, editor-style completions through the whole suggestion pipeline (a Windows path among
//      them), a keystroke that must reuse the KV cache, and a bad request that must not end the session;
//   2. the same package with its native library removed: `generate` must fail with the engine's explanation
//      (NativeLoadError), not a dead worker;
//   3. linux-x64 only, on SwiftShader (Chromium's Vulkan on the CPU): `generate --device gpu` must run on the GPU
//      with the KV cache kept there (the packaged binding's GPU outputs, the bundled graph variant). In CI a
//      missing SwiftShader fails this step; elsewhere it is reported and skipped.
// Compared with linux-x64, run here in the same command. The rule, because int8 kernels differ by CPU:
//   - the most likely next token is the same, unless linux-x64's top two are within NEAR_TIE nats;
//   - every token in both top-5 lists has a log-probability within LOGPROB_TOLERANCE nats of linux-x64's;
//   - greedy continuations and suggestions are reported (how far they agree), not required to be equal: a
//     near tie anywhere along them changes the rest.
// Exit code 0 when every target passed.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { unpackVsix } = require('./vsix-check');
const { targetOf } = require('./vsix-targets');
const { nodeFor } = require('./foreign-node');

const ROOT = path.resolve(__dirname, '..');
const NEAR_TIE = 0.3;
const LOGPROB_TOLERANCE = 0.3;
const RUN_TIMEOUT_MS = 300_000;

const PROMPTS = [
  'def fibonacci(n):\n    if n < 2:\n        return ',
  'import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return ',
  'function add(a: number, b: number): number {\n  return ',
  'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.',
];
const EDITOR = [
  { prefix: 'def area(width, height):\n    return width', suffix: '\n', language: 'python', path: 'src\\geometry\\area.py' },
  {
    prefix: 'export function clamp(x: number, lo: number, hi: number): number {\n  return Math.',
    suffix: '\n}\n',
    language: 'typescript',
    path: 'src/clamp.ts',
  },
];

/** @param {string[]} argv */
function parseArgs(argv) {
  let targets = ['linux-x64', 'linux-arm64', 'win32-x64'];
  let vsixDir = ROOT;
  /** @type {string | null} */
  let json = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--target') targets = (argv[++i] ?? '').split(',').filter((t) => t);
    else if (a === '--vsix-dir') vsixDir = path.resolve(argv[++i] ?? '.');
    else if (a === '--json') json = path.resolve(argv[++i] ?? 'smoke.json');
    else throw new Error(`unknown option ${a} (--target a,b, --vsix-dir DIR, --json FILE)`);
  }
  for (const t of targets) targetOf(t);
  return { targets, vsixDir, json };
}

/**
 * Runs the package's CLI with `target`'s Node; stdio through files (under Wine a pipe as stdout fails: EBADF).
 * @param {string} target
 * @param {string} ext
 * @param {string[]} args
 * @param {string} [stdin] a file fed as stdin
 */
function cli(target, ext, args, stdin, env = {}) {
  const node = nodeFor(target);
  const io = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-smoke-io-'));
  const out = path.join(io, 'out');
  const err = path.join(io, 'err');
  /** @type {['ignore' | number, number, number]} */
  const fds = [stdin ? fs.openSync(stdin, 'r') : 'ignore', fs.openSync(out, 'w'), fs.openSync(err, 'w')];
  const t0 = Date.now();
  try {
    const r = spawnSync(node.exe, [...node.args, path.join('dist', 'cli.js'), ...args], {
      cwd: ext,
      env: { ...node.env, ...env },
      stdio: fds,
      timeout: RUN_TIMEOUT_MS,
    });
    return {
      status: r.status,
      signal: r.signal,
      stdout: fs.readFileSync(out, 'utf8'),
      stderr: fs.readFileSync(err, 'utf8'),
      ms: Date.now() - t0,
      how: node.how,
    };
  } finally {
    for (const fd of fds) if (typeof fd === 'number') fs.closeSync(fd);
    fs.rmSync(io, { recursive: true, force: true });
  }
}

/** The serve-stdio requests, one per line. */
function requests() {
  /** @type {Record<string, unknown>[]} */
  const lines = [];
  PROMPTS.forEach((prompt, i) => {
    lines.push({ id: `top-${i}`, prompt, max_new_tokens: 1, num_beams: 5, num_return_sequences: 5 });
    lines.push({ id: `greedy-${i}`, prompt, max_new_tokens: 16 });
  });
  EDITOR.forEach((e, i) => {
    lines.push({ id: `editor-${i}`, ...e, explicit: true });
    // Right after the first, the user types two more characters: the prompt grows at the cursor, so most of it
    // is already in the cache.
    if (i === 0) lines.push({ id: 'keystroke', ...e, prefix: `${e.prefix} *`, explicit: true });
  });
  lines.push({ id: 'bad', prompt: 'x', temperature: -1 });
  lines.push({ id: 'after-bad', prompt: PROMPTS[0], max_new_tokens: 4 });
  return lines;
}

/**
 * @param {string} target
 * @param {string} ext
 */
function runTarget(target, ext) {
  const input = path.join(path.dirname(ext), 'requests.jsonl');
  fs.writeFileSync(
    input,
    `${requests()
      .map((r) => JSON.stringify(r))
      .join('\n')}\n`,
  );
  const serve = cli(target, ext, ['serve-stdio', '--threads', '2'], input);
  /** @type {Record<string, any>} */
  const byId = {};
  for (const line of serve.stdout.split('\n').filter((l) => l.trim())) {
    const r = JSON.parse(line);
    byId[r.id] = r;
  }
  // The same package without its native library: what a user with a missing runtime sees.
  const broken = path.join(path.dirname(ext), 'broken');
  fs.cpSync(ext, broken, { recursive: true });
  const t = targetOf(target);
  fs.rmSync(path.join(broken, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6', t.platform, t.arch, t.runtime));
  const failed = cli(target, broken, ['generate', '--prompt', 'x', '--max-new-tokens', '2']);
  return { serve, byId, failed, gpu: target === 'linux-x64' ? gpuRun(target, ext) : null };
}

/**
 * The package's GPU path on SwiftShader: a short greedy generation with `--device gpu`.
 * @param {string} target
 * @param {string} ext
 */
function gpuRun(target, ext) {
  /** @type {{ env: Record<string, string> } | { missing: string }} */
  let found;
  try {
    // The tests' own finder, built by npm test (a computed path: the scripts' type check does not read out/).
    found = require(path.join(ROOT, 'out', 'test', 'swiftShader.js')).swiftShaderEnv();
  } catch {
    found = { missing: 'the tests are not built (npm test builds them first)' };
  }
  if (!('env' in found)) return { missing: found.missing };
  return cli(target, ext, ['generate', '--device', 'gpu', '--prompt', PROMPTS[0], '--max-new-tokens', '4', '--temperature', '0'], undefined, found.env);
}

/**
 * The problems of one target's run, checked on its own and against the reference's.
 * @param {string} target
 * @param {ReturnType<typeof runTarget>} run
 * @param {ReturnType<typeof runTarget> | null} ref
 */
function judge(target, run, ref) {
  /** @type {string[]} */
  const problems = [];
  const { byId, serve, failed } = run;
  if (serve.status !== 0) problems.push(`serve-stdio exited ${serve.status ?? serve.signal}: ${serve.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const want = requests().map((r) => r.id);
  for (const id of want) if (!byId[String(id)]) problems.push(`no answer to ${id}`);
  for (const id of want.filter((x) => x !== 'bad')) {
    const r = byId[String(id)];
    if (r && r.finish_reason === 'error') problems.push(`${id} failed: ${r.error ?? JSON.stringify(r)}`);
  }
  if (byId.bad && byId.bad.finish_reason !== 'error') problems.push('a bad request was not answered as an error');
  const ks = byId.keystroke;
  if (ks && !(ks.reused_tokens > 0 && ks.prefill_tokens < ks.prompt_tokens / 2)) {
    problems.push(`the keystroke did not reuse the KV cache (reused ${ks.reused_tokens}, prefilled ${ks.prefill_tokens} of ${ks.prompt_tokens})`);
  }
  const platform = targetOf(target).platform;
  const expectHint = platform === 'win32' ? /Visual C\+\+ Redistributable/ : /reinstall Ghostline/i;
  if (run.gpu && 'missing' in run.gpu) {
    if (process.env.CI) problems.push(`the GPU step needs SwiftShader in CI: ${run.gpu.missing}`);
    else console.log(`[smoke] ${target}: the GPU step is skipped: ${run.gpu.missing}`);
  } else if (run.gpu) {
    const g = run.gpu;
    if (g.status !== 0) problems.push(`generate --device gpu exited ${g.status ?? g.signal}: ${g.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    else if (!/runs on the GPU \(WebGPU on Vulkan, KV cache kept on the GPU\)/.test(g.stderr)) {
      problems.push(
        `generate --device gpu did not keep the KV cache on the GPU: ${
          g.stderr
            .trim()
            .split('\n')
            .find((l) => l.includes('runs on')) ?? g.stderr.slice(0, 200)
        }`,
      );
    } else if (!g.stdout.trim()) problems.push('generate --device gpu wrote no text');
  }
  if (failed.status === 0) problems.push('generate succeeded without its native library');
  else if (!/native library did not load/.test(failed.stderr) || !expectHint.test(failed.stderr)) {
    problems.push(`without its library, generate said: ${failed.stderr.trim().slice(0, 300)}`);
  }
  /** @type {Record<string, unknown>} */
  const agreement = {};
  if (ref) {
    let sameTop = 0;
    let maxDiff = 0;
    PROMPTS.forEach((_, i) => {
      const mine = byId[`top-${i}`]?.sequences ?? [];
      const theirs = ref.byId[`top-${i}`]?.sequences ?? [];
      if (mine.length === 0 || theirs.length === 0) return;
      const margin = theirs.length > 1 ? theirs[0].logprob - theirs[1].logprob : Infinity;
      if (mine[0].text === theirs[0].text) sameTop++;
      else if (margin >= NEAR_TIE)
        problems.push(
          `prompt ${i}: next token ${JSON.stringify(mine[0].text)}, linux-x64 ${JSON.stringify(theirs[0].text)} (margin ${margin.toFixed(2)} nats)`,
        );
      for (const s of mine) {
        const o = theirs.find((/** @type {{ text: string }} */ x) => x.text === s.text);
        if (!o) continue;
        const d = Math.abs(s.logprob - o.logprob);
        maxDiff = Math.max(maxDiff, d);
        if (d > LOGPROB_TOLERANCE) problems.push(`prompt ${i}: log p(${JSON.stringify(s.text)}) ${s.logprob.toFixed(3)}, linux-x64 ${o.logprob.toFixed(3)}`);
      }
    });
    const shared = (/** @type {string} */ a, /** @type {string} */ b) => {
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      return n;
    };
    agreement.sameTopToken = `${sameTop}/${PROMPTS.length}`;
    agreement.maxLogprobDiff = Number(maxDiff.toFixed(4));
    agreement.greedySharedChars = PROMPTS.map(
      (_, i) => `${shared(byId[`greedy-${i}`]?.text ?? '', ref.byId[`greedy-${i}`]?.text ?? '')}/${(ref.byId[`greedy-${i}`]?.text ?? '').length}`,
    );
    agreement.sameSuggestions = `${EDITOR.filter((_, i) => byId[`editor-${i}`]?.text === ref.byId[`editor-${i}`]?.text).length}/${EDITOR.length}`;
  }
  return { problems, agreement };
}

async function main() {
  const { targets, vsixDir, json } = parseArgs(process.argv.slice(2));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-smoke-'));
  /** @type {Record<string, ReturnType<typeof runTarget>>} */
  const runs = {};
  /** @type {Record<string, unknown>[]} */
  const report = [];
  let failed = 0;
  try {
    const order = targets.includes('linux-x64') ? ['linux-x64', ...targets.filter((t) => t !== 'linux-x64')] : ['linux-x64', ...targets];
    for (const target of order) {
      const vsix = path.join(vsixDir, `ghostline-${target}.vsix`);
      if (!fs.existsSync(vsix)) {
        console.log(`[smoke] ${path.basename(vsix)} is not built: building it`);
        execFileSync(process.execPath, [path.join(__dirname, 'package.js'), '--target', target, '--out-dir', vsixDir], { stdio: 'inherit' });
      }
      const ext = await unpackVsix(vsix, path.join(work, target));
      console.log(`[smoke] ${target}: running its package`);
      runs[target] = runTarget(target, ext);
      if (!targets.includes(target)) continue; // the reference only
      const ref = target === 'linux-x64' ? null : runs['linux-x64'];
      const { problems, agreement } = judge(target, runs[target], ref);
      const r = runs[target];
      const entry = {
        target,
        how: r.serve.how,
        serveSeconds: Number((r.serve.ms / 1000).toFixed(1)),
        ...agreement,
        nativeFailure: r.failed.stderr.trim().split('\n').at(-1)?.slice(0, 160),
        ...(r.gpu &&
          'status' in r.gpu && { gpuSeconds: Number((r.gpu.ms / 1000).toFixed(1)), gpuText: r.gpu.stdout.trim(), cpuText: r.byId['greedy-0']?.text }),
        problems,
      };
      report.push(entry);
      if (problems.length > 0) failed++;
      console.log(
        `[smoke] ${target} (${entry.how}, serve-stdio ${entry.serveSeconds} s): ${problems.length === 0 ? 'passed' : `FAILED\n  ${problems.join('\n  ')}`}`,
      );
      if (ref) console.log(`[smoke]   against linux-x64: ${JSON.stringify(agreement)}`);
      if (r.gpu && 'status' in r.gpu)
        console.log(`[smoke]   generate --device gpu (SwiftShader): ${(r.gpu.ms / 1000).toFixed(1)} s, ${JSON.stringify(r.gpu.stdout.trim())}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (json) fs.writeFileSync(json, `${JSON.stringify({ nearTieNats: NEAR_TIE, logprobToleranceNats: LOGPROB_TOLERANCE, targets: report }, null, 2)}\n`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`test:packaged: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  },
);
