import type { TextSource } from '../types';
import { leadingWhitespace } from '../context/documentContext';
import { indentOf } from '../filters/filterContext';
import { type GeneratePlan, OPENS_BODY } from './plan';

/** A comment line, or a block comment's continuation. */
const COMMENT_LINE = /^\s*(?:\*|\/\/|#|\/\*)/;
/** Lines looked at, above and below the insertion, to learn the file's indentation unit. */
const UNIT_SAMPLE_LINES = 200;

/**
 * Where a body starts, written before the model's text: a line break and the body's indentation, so the
 * model continues inside the body instead of choosing where to go. Without it the small model, asked to go on
 * after a docstring or a `{`, often skipped the body and wrote the next method (the result was then dropped).
 * The prompt ends in the indentation, as inline completion's does on a blank line (the engine's token
 * healing re-tokenizes it as training did).
 *
 * Only for the `body` intent at the end of its line. After a line that opens a body, the indentation is one
 * unit deeper than that line, and only while the body is empty (the next code line is not deeper: a body that
 * has code gets the result where the plan says, unchanged). After a docstring or a comment it is the line's
 * own: the docstring sits in the body, and a comment sits where the declaration it describes goes.
 */
export function bodyLead(doc: TextSource, plan: GeneratePlan, fallbackUnit = '    '): string {
  if (plan.intent !== 'body') return '';
  const line = doc.lineAt(plan.insertAt.line);
  if (line.slice(plan.insertAt.character).trim() !== '') return '';
  const own = leadingWhitespace(line);
  if (!OPENS_BODY.test(line.slice(0, plan.insertAt.character))) return `\n${commentIndent(doc, plan.insertAt.line)}`;
  const next = nextCodeLine(doc, plan.insertAt.line);
  if (next !== null && indentOf(next) > indentOf(own)) return '';
  return `\n${own}${indentUnit(doc, plan.insertAt.line, own) ?? fallbackUnit}`;
}

/** The indentation of the comment or docstring ending on `line`: a block comment's ` * ` and ` */ ` lines take their `; /*` line's. */
function commentIndent(doc: TextSource, line: number): string {
  if (!/^\s*\*/.test(doc.lineAt(line))) return leadingWhitespace(doc.lineAt(line));
  for (let i = line; i >= 0 && i > line - UNIT_SAMPLE_LINES; i--) if (doc.lineAt(i).includes('/*')) return leadingWhitespace(doc.lineAt(i));
  return leadingWhitespace(doc.lineAt(line));
}

function nextCodeLine(doc: TextSource, line: number): string | null {
  for (let i = line + 1; i < doc.lineCount && i <= line + UNIT_SAMPLE_LINES; i++) if (doc.lineAt(i).trim() !== '') return doc.lineAt(i);
  return null;
}

/**
 * The file's indentation unit: a tab where the line itself is indented with tabs, else the most common
 * step of 2 or more between consecutive code lines near the insertion; null when the file shows none.
 */
export function indentUnit(doc: TextSource, around: number, own = leadingWhitespace(doc.lineAt(around))): string | null {
  if (own.includes('\t')) return '\t';
  const steps = new Map<number, number>();
  let previous: number | null = null;
  const from = Math.max(0, around - UNIT_SAMPLE_LINES);
  const to = Math.min(doc.lineCount, around + UNIT_SAMPLE_LINES);
  for (let i = from; i < to; i++) {
    const text = doc.lineAt(i);
    // Blank lines and comment lines (a doc comment's ` * ` lines step by one) say nothing of the code's unit.
    if (text.trim() === '' || COMMENT_LINE.test(text)) continue;
    const ws = leadingWhitespace(text);
    if (ws.includes('\t')) return '\t';
    if (previous !== null && ws.length >= previous + 2) steps.set(ws.length - previous, (steps.get(ws.length - previous) ?? 0) + 1);
    previous = ws.length;
  }
  let best = 0;
  let count = 0;
  for (const [step, n] of steps) if (n > count || (n === count && step < best)) [best, count] = [step, n];
  return count === 0 ? null : ' '.repeat(Math.min(best, 8));
}
