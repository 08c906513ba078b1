import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ModelFolderError } from '../shared/errors';

/**
 * A tokenizer.json is code: its pre-tokenizer is a regular expression that JavaScript runs by backtracking, and
 * a pattern such as `(a|aa)+$` takes longer than the age of the universe on a line of 64 "a"s. A run cannot be
 * interrupted in the thread that started it: in the extension host (a server backend encodes prompts there)
 * that is a frozen editor, in the worker a model that never loads. So before a model folder's tokenizer is
 * used, it encodes and decodes texts that set such patterns off (runs of one character class, short for
 * exponential and long for polynomial backtracking) in a thread of its own, which is stopped at the deadline.
 *
 * A real tokenizer is built and passes in 0.2-0.4 s (the default model's, Qwen2.5-Coder's, on 2 cores, while the
 * model's session opens); a pathological one does not finish at all, so the deadline is far above any
 * machine's time for a real one.
 */
const PROBE_DEADLINE_MS = 10_000;

const UNITS = ['a', 'A', '0', ' ', '\t', '\n', '\r\n', '_', '.', '(', '"', '#', 'é', '中', '😀', 'a ', 'a.', ' \n'];
/** Exponential blow-ups show within a few dozen characters: every unit, 64 characters long. */
const SHORT = 64;
/**
 * Polynomial ones (a cubic pattern) show over a line's length: the runs code has most, 2,048 characters long.
 * Long texts are most of the check's time, so only these.
 */
const LONG_UNITS = [' ', '\t', '\n', 'a', '0', '.'];
const LONG = 2048;

/** The probe's texts: each unit repeated, alone and followed by a character that ends a match differently. */
export function probeTexts(): string[] {
  const runs = (u: string, n: number) => {
    const run = u.repeat(Math.ceil(n / u.length));
    return [run, `${run}!`];
  };
  return [...UNITS.flatMap((u) => runs(u, SHORT)), ...LONG_UNITS.flatMap((u) => runs(u, LONG))];
}

/** A probe text in words, for the message: `a line of 64 characters ("a" repeated)`. */
export function describeProbeText(text: string): string {
  const body = text.endsWith('!') ? text.slice(0, -1) : text;
  const unit = UNITS.find((u) => body === u.repeat(body.length / u.length)) ?? body.slice(0, 8);
  return `a line of ${body.length} characters (${JSON.stringify(unit)} repeated${text.endsWith('!') ? ', then "!"' : ''})`;
}

/** Messages from the probe thread (tokenizerProbeThread.ts). */
export type ProbeMessage = { type: 'start'; index: number } | { type: 'done' } | { type: 'error'; message: string; file?: string };

/**
 * Resolves when the folder's tokenizer.json (with its tokenizer_config.json) encodes every probe text before
 * the deadline; rejects with a ModelFolderError naming the file and the text it stalled on, or the error that
 * building the tokenizer threw.
 */
export async function probeTokenizer(dir: string, opts: { deadlineMs?: number } = {}): Promise<void> {
  const file = path.join(dir, 'tokenizer.json');
  const key = passKey(dir);
  if (passed.has(key)) return;
  await runProbe(dir, file, opts.deadlineMs ?? PROBE_DEADLINE_MS);
  passed.add(key);
}

/** Files that passed in this process, by path, size and modification time: a model loaded again is not re-checked. */
const passed = new Set<string>();

function passKey(dir: string): string {
  const stamp = (f: string) => {
    try {
      const s = fs.statSync(f);
      return `${s.size}:${s.mtimeMs}`;
    } catch {
      return 'none';
    }
  };
  return [path.resolve(dir), stamp(path.join(dir, 'tokenizer.json')), stamp(path.join(dir, 'tokenizer_config.json'))].join('|');
}

function runProbe(dir: string, file: string, deadlineMs: number): Promise<void> {
  const texts = probeTexts();
  return new Promise<void>((resolve, reject) => {
    // Bundled, the thread's script sits beside this code in dist/; compiled by tsc, beside this file.
    const thread = new Worker(path.join(__dirname, 'tokenizerProbeThread.js'), { workerData: { dir, texts } });
    let current = -1;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void thread.terminate();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => {
      const what = current >= 0 ? `encoding and decoding ${describeProbeText(texts[current])}` : 'building the tokenizer';
      finish(
        new ModelFolderError(
          file,
          `${what} did not finish within ${Math.round(deadlineMs / 1000)} s: a regular expression of its pre-tokenizer, normalizer or decoder backtracks without end on such text, ` +
            "so Ghostline will not use this tokenizer (it would stall on the user's code). Take tokenizer.json from the model's original repository.",
        ),
      );
    }, deadlineMs);
    thread.on('message', (m: ProbeMessage) => {
      if (m.type === 'start') current = m.index;
      else if (m.type === 'done') finish();
      else finish(new ModelFolderError(m.file ?? file, m.file ? m.message : `the tokenizer cannot be used: ${m.message}`));
    });
    thread.on('error', (err) => finish(new ModelFolderError(file, `the tokenizer cannot be used: ${err.message}`)));
    thread.on('exit', (code) => finish(new ModelFolderError(file, `the tokenizer check stopped (exit code ${code}) before it was done`)));
  });
}
