import { repeatsStatementAbove, thirdIdenticalLine } from '../../engine/shared/loopCheck';
import type { CompletionFilter } from './filterContext';

/**
 * Small models fall into loops. Cuts at the second of two lines in a row that say the same statement (equal
 * but for indentation, at least 4 characters with a letter or digit: on the eval sets every such pair in a
 * suggestion was the model repeating itself, 38 of 109 multi-line suggestions), at the third identical line
 * in a row (short lines: `a()`, `}`), and cuts a last line that ends
 * in a loop down to one copy of what repeats: a chunk of 1-16 characters 4 or more times (`0000`), or one
 * of up to 48 characters 3 or more times, possibly cut off mid-copy (` + f(n - 1) + f(n - 1) + f(n`): the
 * generation stopped inside the loop. A repeated run on an earlier line (`# ----`) was left by the model and
 * is kept, and so is one on the last line when the model ended it itself (finish reason `eos` or `stop`: an
 * end of text, a stop string, the line limit's newline): a loop runs until a limit stops it (`length`,
 * `time`, or `loop`: the engine's stop rule for these same loops), so a line the model finished is a ruler
 * (`# =====`) or data (`0, 0, 0, 0,`), not a loop. The line rules live in engine/shared/loopCheck.ts.
 */
export const repetitionGuard: CompletionFilter = (text, ctx) => {
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    if (repeatsStatementAbove(lines, i)) {
      text = lines.slice(0, i).join('\n');
      break;
    }
    if (thirdIdenticalLine(lines, i)) {
      text = lines.slice(0, i - 1).join('\n');
      break;
    }
  }
  if (ctx.finishReason === 'eos' || ctx.finishReason === 'stop') return text;
  const last = text.lastIndexOf('\n') + 1;
  return text.slice(0, last) + cutTrailingLoop(text.slice(last).replace(/(.{1,16}?)\1{3,}$/u, '$1'));
};

const MAX_CHUNK = 48;
const MIN_CHUNK = 4;

/**
 * Where to cut a loop found to end its first copy at `end`: any rotation of the period works, so take the
 * first that ends on a word or a closing bracket before a space with its brackets balanced (`f(n - 1)`,
 * not `f(n - 1) +` or `f(n`).
 */
function cleanCut(line: string, end: number, period: number): number {
  for (let e = end; e < end + period && e <= line.length; e++) {
    if (/[\w)\]}"'`]/.test(line[e - 1]) && (e === line.length || line[e] === ' ') && balanced(line.slice(0, e))) return e;
  }
  return end;
}

/** A line that ends in 3+ copies of a chunk (the last one maybe cut short) keeps one copy. */
function cutTrailingLoop(line: string): string {
  for (let start = 0; start + 3 * MIN_CHUNK <= line.length; start++) {
    for (let size = MIN_CHUNK; size <= MAX_CHUNK && start + 3 * size <= line.length; size++) {
      const chunk = line.slice(start, start + size);
      let at = start + size;
      let copies = 1;
      while (line.startsWith(chunk, at)) {
        at += size;
        copies++;
      }
      if (copies >= 3 && chunk.startsWith(line.slice(at)) && chunk.trim() !== '') return line.slice(0, cleanCut(line, start + size, size));
    }
  }
  return line;
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const ch of s) {
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  return depth <= 0;
}
