// node out/bench/oracle/writeSample.js: writes the committed oracle sample (test/completion/oracle/sample.jsonl)
// that test/completion/oracle.test.ts asserts on: 60 positions of each kind from the offline corpus, drawn
// with a fixed seed, each document cut to whole lines within 1,800 characters before the cursor and 600 after
// (and marked as cut where it was).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../../src/engine/host/defaultModel';
import { corpusPositions } from '../qualityOracle';
import { KINDS, type OraclePosition, rng } from './positions';

function cut(p: OraclePosition): OraclePosition {
  const from = p.doc.lastIndexOf('\n', Math.max(0, p.cursor - 1800)) + 1;
  const nl = p.doc.indexOf('\n', p.cursor + 600);
  const to = nl < 0 ? p.doc.length : nl;
  // Marked as a slice: the pipeline then knows its first and last lines need not be the file's.
  return { ...p, doc: p.doc.slice(from, to), cursor: p.cursor - from, cut: { above: from > 0, below: to < p.doc.length } };
}

const root = packageRoot(__dirname);
const all = corpusPositions(root);
const random = rng(2023);
const out: OraclePosition[] = [];
for (const k of KINDS) {
  const pool = all.filter((p) => p.kind === k);
  for (let i = 0; i < 60 && pool.length > 0; i++) out.push(cut(pool.splice(Math.floor(random() * pool.length), 1)[0]));
}
const file = path.join(root, 'test', 'completion', 'oracle', 'sample.jsonl');
fs.writeFileSync(file, `${out.map((p) => JSON.stringify(p)).join('\n')}\n`);
console.log(`${out.length} positions -> ${path.relative(root, file)} (${fs.statSync(file).size} bytes)`);
