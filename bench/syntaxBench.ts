// Time of SyntaxRefiner.refine() per language on ~3 KB windows (issue 16: well under 2 ms median).
//   npx tsc -p . && node out/bench/syntaxBench.js [--iterations N] [--json FILE]
// Each measured call gets a new window (the comment line at its top changes), so the window before
// insertion is parsed every time: a single-line suggestion costs two parses, a multi-line one that is cut
// three (before, after, after the cut). "cold": every window parsed from scratch (a refiner with
// noReuse; the texts with a suggestion are always parsed incrementally from the window's tree).
// "typing": the window parsed incrementally from the previous call's, as while typing (one edit apart).
// "gate": the confidence gate on the same suggestion (features from 48 token log-probabilities + the score).
import * as fs from 'node:fs';
import { confidence } from '../src/completion/gate/calibration';
import { gateFeatures } from '../src/completion/gate/features';
import { GENERIC_CALIBRATION } from '../src/completion/gate/genericCalibration';
import { SyntaxRefiner, type SyntaxWindow } from '../src/completion/syntax/syntaxRefiner';
import { median, percentile, round } from './stats';

interface Sample {
  languageId: string;
  /** One function; NAME is replaced, CURSOR marks the cursor in the middle copy. */
  unit: string;
  /** A one-line suggestion at the cursor. */
  line: string;
  /** A multi-line suggestion that runs past the end of the cursor's block (cut there). */
  multi: string;
}

const SAMPLES: Sample[] = [
  {
    languageId: 'python',
    unit: 'def NAME(items, limit=10):\n    """Sums the items under the limit."""\n    total = 0\n    for item in items:\n        if item < limit:\n            total += item\n    CURSOR\n    return total\n\n\n',
    line: 'print(total, limit)',
    multi: 'if total > limit:\n        total = limit\n    return total\n\n\ndef other(x):\n    return x * 2',
  },
  {
    languageId: 'typescript',
    unit: 'export function NAME(items: number[], limit = 10): number {\n  let total = 0;\n  for (const item of items) {\n    if (item < limit) total += item;\n  }\n  CURSOR\n  return total;\n}\n\n',
    line: 'console.log(total, limit);',
    multi: 'if (total > limit) {\n    total = limit;\n  }\n  return total;\n}\n\nexport function other(x: number): number {\n  return x * 2;\n}',
  },
  {
    languageId: 'typescriptreact',
    unit: 'export function NAME({ items }: { items: string[] }) {\n  const count = items.length;\n  CURSOR\n  return (\n    <ul className="list">\n      {items.map((item) => (\n        <li key={item}>{item}</li>\n      ))}\n    </ul>\n  );\n}\n\n',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: TSX source text
    line: 'const title = `Items: ${count}`;',
    multi: 'if (count === 0) {\n    return <p>No items</p>;\n  }\n  return <ul />;\n}\n\nexport function Other() {\n  return null;\n}',
  },
  {
    languageId: 'javascript',
    unit: 'function NAME(items, limit = 10) {\n  let total = 0;\n  for (const item of items) {\n    if (item < limit) total += item;\n  }\n  CURSOR\n  return total;\n}\n\n',
    line: 'console.log(total, limit);',
    multi: 'if (total > limit) {\n    total = limit;\n  }\n  return total;\n}\n\nfunction other(x) {\n  return x * 2;\n}',
  },
  {
    languageId: 'go',
    unit: 'func NAME(items []int, limit int) int {\n\ttotal := 0\n\tfor _, item := range items {\n\t\tif item < limit {\n\t\t\ttotal += item\n\t\t}\n\t}\n\tCURSOR\n\treturn total\n}\n\n',
    line: 'fmt.Println(total, limit)',
    multi: 'if total > limit {\n\t\ttotal = limit\n\t}\n\treturn total\n}\n\nfunc other(x int) int {\n\treturn x * 2\n}',
  },
  {
    languageId: 'rust',
    unit: "fn NAME<'a>(items: &'a [i64], limit: i64) -> i64 {\n    let mut total = 0;\n    for item in items {\n        if *item < limit {\n            total += item;\n        }\n    }\n    CURSOR\n    return total;\n}\n\n",
    line: 'println!("{} {}", total, limit);',
    multi: 'if total > limit {\n        total = limit;\n    }\n    return total;\n}\n\nfn other(x: i64) -> i64 {\n    x * 2\n}',
  },
  {
    languageId: 'java',
    unit: '  static int NAME(int[] items, int limit) {\n    int total = 0;\n    for (int item : items) {\n      if (item < limit) {\n        total += item;\n      }\n    }\n    CURSOR\n    return total;\n  }\n\n',
    line: 'System.out.println(total + " " + limit);',
    multi: 'if (total > limit) {\n      total = limit;\n    }\n    return total;\n  }\n\n  static int other(int x) {\n    return x * 2;\n  }',
  },
  {
    languageId: 'c',
    unit: 'static int NAME(const int *items, size_t n, int limit) {\n  int total = 0;\n  for (size_t i = 0; i < n; i++) {\n    if (items[i] < limit) {\n      total += items[i];\n    }\n  }\n  CURSOR\n  return total;\n}\n\n',
    line: 'printf("%d %d\\n", total, limit);',
    multi: 'if (total > limit) {\n    total = limit;\n  }\n  return total;\n}\n\nstatic int other(int x) {\n  return x * 2;\n}',
  },
  {
    languageId: 'cpp',
    unit: 'int NAME(const std::vector<int>& items, int limit) {\n  int total = 0;\n  for (int item : items) {\n    if (item < limit) {\n      total += item;\n    }\n  }\n  CURSOR\n  return total;\n}\n\n',
    line: 'std::cout << total << " " << limit << std::endl;',
    multi: 'if (total > limit) {\n    total = limit;\n  }\n  return total;\n}\n\nint other(int x) {\n  return x * 2;\n}',
  },
];

const WINDOW_CHARS = 3000;

/** About WINDOW_CHARS of code: copies of the unit, the cursor in the middle one (the others keep a blank line). */
function windowOf(s: Sample, variant: number): SyntaxWindow {
  const copies = Math.max(3, Math.ceil(WINDOW_CHARS / s.unit.length));
  const middle = Math.floor(copies / 2);
  const comment = s.languageId === 'python' ? '#' : '//';
  let code = `${comment} variant ${variant}\n`;
  for (let i = 0; i < copies; i++) code += s.unit.replace('NAME', `fn${i}`).replace('CURSOR', i === middle ? '\u0000' : '');
  if (s.languageId === 'java') code = `class Bench {\n${code}}\n`;
  const at = code.indexOf('\u0000');
  const before = code.slice(0, at);
  const after = code.slice(at + 1);
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = after.indexOf('\n');
  return {
    languageId: s.languageId,
    prefix: before.slice(0, lineStart),
    linePrefix: before.slice(lineStart),
    lineSuffix: after.slice(0, lineEnd),
    suffix: after.slice(lineEnd),
  };
}

/** The gate's cost on one suggestion: features from its tokens' log-probabilities, then the score. */
function timeGate(text: string, w: SyntaxWindow, warmup: number, iterations: number) {
  const n = 48;
  const tokenLogprobs = Array.from({ length: n }, (_, i) => -((i * 7) % 5) / 2);
  const tokenTextEnds = Array.from({ length: n }, (_, i) => Math.round(((i + 1) * text.length) / n));
  const ms: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const start = performance.now();
    const x = gateFeatures({
      text,
      raw: text,
      tokenLogprobs,
      tokenTextEnds,
      linePrefix: w.linePrefix,
      lineSuffix: w.lineSuffix,
      lineAbove: 'x = 1',
      languageId: w.languageId,
    });
    confidence(GENERIC_CALIBRATION, x);
    if (i >= warmup) ms.push(performance.now() - start);
  }
  return { median: round(median(ms), 4), p95: round(percentile(ms, 95), 4) };
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const iterations = Number(arg('--iterations') ?? 300);
  const warmup = 30;
  const logs: string[] = [];
  const cold = new SyntaxRefiner({ log: (l) => logs.push(l), noReuse: true });
  const typing = new SyntaxRefiner({ log: (l) => logs.push(l) });
  const rows: Record<string, unknown>[] = [];
  console.log(`refine() on ~${WINDOW_CHARS}-character windows, ${iterations} calls each (after ${warmup} warm-up calls); ms, median / p95`);
  console.log('language         chars  load ms  cold single       cold multi (cut)  typing single     typing multi (cut)  gate              outcomes');
  for (const s of SAMPLES) {
    const t0 = performance.now();
    if (!(await cold.ready(s.languageId)) || !(await typing.ready(s.languageId))) throw new Error(`no grammar for ${s.languageId}: ${logs.join('; ')}`);
    const loadMs = performance.now() - t0;
    const outcomes = new Set<string>();
    const time = (refiner: SyntaxRefiner, text: string) => {
      const ms: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const w = windowOf(s, i);
        const start = performance.now();
        refiner.refine(text, w);
        const d = performance.now() - start;
        if (i >= warmup) ms.push(d);
        outcomes.add(refiner.lastOutcome);
      }
      return { median: round(median(ms), 3), p95: round(percentile(ms, 95), 3) };
    };
    const w = windowOf(s, 0);
    const chars = w.prefix.length + w.linePrefix.length + w.lineSuffix.length + w.suffix.length;
    const r = {
      coldSingle: time(cold, s.line),
      coldMulti: time(cold, s.multi),
      typingSingle: time(typing, s.line),
      typingMulti: time(typing, s.multi),
      gate: timeGate(s.multi, w, warmup, iterations),
    };
    rows.push({ languageId: s.languageId, chars, grammarLoadMs: round(loadMs, 1), ...r, outcomes: [...outcomes] });
    const f = (x: { median: number; p95: number }) => `${x.median.toFixed(2)} / ${x.p95.toFixed(2)}`.padEnd(18);
    console.log(
      `${s.languageId.padEnd(16)} ${String(chars).padStart(5)}  ${loadMs.toFixed(0).padStart(7)}  ${f(r.coldSingle)}${f(r.coldMulti)}${f(r.typingSingle)}${f(r.typingMulti)}${f(r.gate)}  ${[...outcomes].join(',')}`,
    );
  }
  if (logs.length > 0) console.log(`log: ${logs.join('\n     ')}`);
  const json = arg('--json');
  if (json) fs.writeFileSync(json, `${JSON.stringify({ iterations, windowChars: WINDOW_CHARS, node: process.version, rows }, null, 2)}\n`);
  cold.dispose();
  typing.dispose();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
