// node npm run gen:after-cursor-set: writes tools/model/eval/after-cursor.jsonl, positions with code after the
// cursor as auto-closing leaves it, derived from the eval sets' own lines (heldout.jsonl, external.jsonl): at a
// sample's cursor line, the cursor right after an opening bracket or quote whose pair closes on the line, the
// closers of every pair still open there right of it, and the truth what the author wrote up to the opener's
// closer (bench/oracle/positions.ts's autoClosed, as the oracle check cuts them). One position per source sample
// that has such a pair, picked with a fixed seed; the rest of the file as the sample has it. The confidence gate
// never saw a position with code after the cursor before this set (its code_after_cursor weight was 0).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { seededRandom } from '../src/completion/calibrate/workspacePositions';
import { packageRoot } from '../src/engine/host/defaultModel';
import { type EvalSample, readEvalSamples } from './evalSet';
import { autoClosed } from './oracle/positions';

function main(): void {
  const root = packageRoot(__dirname);
  const dir = path.join(root, 'tools', 'model', 'eval');
  const rand = seededRandom(2031);
  const out: (EvalSample & { source: string })[] = [];
  for (const set of ['heldout', 'external']) {
    for (const s of readEvalSamples(path.join(dir, `${set}.jsonl`))) {
      const start = s.prefix.lastIndexOf('\n') + 1;
      const line = s.prefix.slice(start) + s.expected;
      const pairs = autoClosed(line, s.language).filter((p) => p.cursor > line.length - line.trimStart().length);
      if (pairs.length === 0) continue;
      const p = pairs[Math.floor(rand() * pairs.length)];
      out.push({
        path: s.path,
        language: s.language,
        prefix: s.prefix.slice(0, start) + line.slice(0, p.cursor),
        suffix: p.closers + s.suffix,
        expected: line.slice(p.cursor, p.close),
        kind: 'after-cursor',
        source: set,
      });
    }
  }
  fs.writeFileSync(path.join(dir, 'after-cursor.jsonl'), `${out.map((s) => JSON.stringify(s)).join('\n')}\n`);
  const by = (k: (s: (typeof out)[number]) => string) => {
    const counts: Record<string, number> = {};
    for (const s of out) counts[k(s)] = (counts[k(s)] ?? 0) + 1;
    return counts;
  };
  console.log(
    `after-cursor.jsonl: ${out.length} positions`,
    by((s) => s.language),
    by((s) => s.source),
  );
}

main();
