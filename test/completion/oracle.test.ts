import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { OraclePosition, PositionKind } from '../../bench/oracle/positions';
import { runOracle } from '../../bench/oracle/runOracle';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { SyntaxRefiner } from '../../src/completion/syntax/syntaxRefiner';
import { ROOT } from '../helpers';

// The oracle check on a committed sample (bench/oracle/writeSample.ts: 60 positions of each kind): a perfect
// suggestion goes through CompletionService and must come out as it went in. Issue 23's targets are 99.5%
// mid-line and 99% elsewhere; the floors here are what the pipeline keeps now (a loss of one position more
// than today fails), raised to the targets as the remaining kinds of loss are fixed.
const FLOOR: Record<PositionKind, number> = { 'mid-line': 0.995, 'fresh-line': 0.98, 'multi-line': 0.99, 'after-cursor': 0.99 };

const sample = fs
  .readFileSync(path.join(ROOT, 'test', 'completion', 'oracle', 'sample.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as OraclePosition);
const syntax = new SyntaxRefiner({ parseTimeoutMs: 5000 });
before(async () => {
  for (const lang of new Set(sample.map((p) => p.language))) assert.ok(await syntax.ready(lang));
});
after(() => syntax.dispose());

for (const contextTokens of [512, 4096]) {
  test(`oracle: perfect suggestions are kept at ${contextTokens} tokens of context`, async () => {
    const settings = { ...defaultCompletionSettings(), prefetch: false, alternatives: 1, minConfidence: 0 };
    const lost: Record<string, string[]> = {};
    for (const p of sample) {
      const r = await runOracle(p, settings, contextTokens, 2.91, syntax);
      if (r.outcome === 'kept') continue;
      lost[p.kind] ??= [];
      lost[p.kind].push(`${p.path}: ${r.outcome} at ${r.stage}: ${JSON.stringify(r.answered)} -> ${JSON.stringify(r.shown)}`);
    }
    for (const kind of Object.keys(FLOOR) as PositionKind[]) {
      const n = sample.filter((p) => p.kind === kind).length;
      const kept = (n - (lost[kind]?.length ?? 0)) / n;
      assert.ok(n >= 50, `${kind}: ${n} positions`);
      assert.ok(kept >= FLOOR[kind], `${kind}: kept ${(kept * 100).toFixed(1)}% < ${FLOOR[kind] * 100}%\n${(lost[kind] ?? []).join('\n')}`);
    }
  });
}
