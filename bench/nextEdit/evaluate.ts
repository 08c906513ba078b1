// The next-edit evaluation over the frozen set (bench/nextEdit/cases.ts): each case's user edit goes into a fresh
// EditHistory, `predictNextEdit` runs through a Generator, and what would be shown is applied to `before` and
// compared with the commit's `after`. The oracle generator answers with the true updated window, so it checks the
// pipeline itself (prompt, parsing, checks) rather than a model: whatever it loses, every model loses.
import type { Generator } from '../../src/completion/generator';
import { EditHistory } from '../../src/completion/nextEdit/editHistory';
import { type EditableWindow, editableWindow } from '../../src/completion/nextEdit/editableWindow';
import type { WindowEdit } from '../../src/completion/nextEdit/parseAnswer';
import { type NextEditDrop, type NextEditOutcome, predictNextEdit } from '../../src/completion/nextEdit/predictNextEdit';
import { emptyStats } from '../../src/engine/shared/cancelledResult';
import type { GenerateResult } from '../../src/engine/shared/types';
import type { NextEditCase } from './cases';

/** Where a case's true next edit lies relative to the window a model may rewrite. */
export type Reach = { kind: 'inside'; window: EditableWindow; trueWindowText: string } | { kind: 'outsideWindow' } | { kind: 'noWindow' };

const splitLines = (text: string) => text.split('\n');
const stripCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * The window `predictNextEdit` will build for the case, and the same lines with the true next edit applied: B is
 * inside when every line above the window and every line below it is the same in `before` and `after`.
 */
export function reachOf(c: Pick<NextEditCase, 'before' | 'after' | 'cursorOffset'>): Reach {
  const window = editableWindow(c.before, c.cursorOffset);
  if (!window) return { kind: 'noWindow' };
  const before = splitLines(c.before);
  const after = splitLines(c.after);
  const delta = after.length - before.length;
  const { startLine, endLine } = window;
  const newEnd = endLine + 1 + delta;
  if (newEnd < startLine) return { kind: 'outsideWindow' };
  for (let i = 0; i < startLine; i++) if (before[i] !== after[i]) return { kind: 'outsideWindow' };
  for (let i = endLine + 1; i < before.length; i++) if (before[i] !== after[i + delta]) return { kind: 'outsideWindow' };
  return { kind: 'inside', window, trueWindowText: after.slice(startLine, newEnd).map(stripCr).join('\n') };
}

/** A finished generation of `text` (no tokens or log-probabilities: the oracle's and the fakes' answers). */
export function answerResult(text: string, finishReason: GenerateResult['finishReason'] = 'stop'): GenerateResult {
  const seq = { text, finishReason, logprob: Number.NaN, tokens: [], tokenLogprobs: [], tokenTextEnds: [] };
  const stats = emptyStats();
  return { ...seq, sequences: [seq], stats };
}

/** A generator that answers every prompt with `answer` (the window, the format's "\n", then "<|file_sep|>"). */
export function fixedAnswerGenerator(windowText: string): Generator {
  return { generate: async () => answerResult(`${windowText}\n<|file_sep|>`) };
}

/** The oracle of a case: the true updated window when B is inside it, else the window unchanged. */
export function oracleGenerator(c: NextEditCase): Generator {
  const reach = reachOf(c);
  const window = editableWindow(c.before, c.cursorOffset);
  return fixedAnswerGenerator(reach.kind === 'inside' ? reach.trueWindowText : (window?.text ?? ''));
}

/**
 * The oracle as a model streams: the true window line by line through `onText`, stopping as soon as the request's
 * signal is aborted (predictNextEdit stops a generation once the answer has rejoined the window). `written` counts
 * the characters streamed before the stop, against the whole answer's.
 */
export function streamingOracleGenerator(c: NextEditCase, written: { chars: number; of: number }): Generator {
  const reach = reachOf(c);
  const window = editableWindow(c.before, c.cursorOffset);
  const answer = `${reach.kind === 'inside' ? reach.trueWindowText : (window?.text ?? '')}\n<|file_sep|>`;
  return {
    generate: async (_prompt, _options, hooks) => {
      written.of += answer.length;
      let sent = '';
      for (const line of answer.split(/(?<=\n)/)) {
        if (hooks?.signal?.aborted) return answerResult(sent, 'cancelled');
        const stop = line.indexOf('<|file_sep|>');
        const visible = stop >= 0 ? line.slice(0, stop) : line;
        sent += visible;
        written.chars += line.length;
        hooks?.onText?.(visible);
        await Promise.resolve();
      }
      return answerResult(sent, 'stop');
    },
  };
}

/** A wrong oracle, to show the check can fail: it answers the `before` window unchanged. */
export function unchangedWindowGenerator(c: NextEditCase): Generator {
  return fixedAnswerGenerator(editableWindow(c.before, c.cursorOffset)?.text ?? '');
}

/** `text` with window edits applied (document lines and UTF-16 characters; sorted, not overlapping). */
export function applyWindowEdits(text: string, edits: readonly WindowEdit[]): string {
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
  const offset = (line: number, character: number) => {
    if (line >= lineStarts.length) throw new Error(`line ${line} is past the text's end`);
    return lineStarts[line] + character;
  };
  let out = text;
  for (const e of [...edits].reverse()) out = out.slice(0, offset(e.startLine, e.startCharacter)) + e.newText + out.slice(offset(e.endLine, e.endCharacter));
  return out;
}

export type CaseResult = { kind: 'shown'; exact: boolean; ms: number } | { kind: 'dropped'; reason: NextEditDrop; ms: number; detail?: string };

export interface CaseRecord {
  id: string;
  repo: string;
  language: string;
  reach: Reach['kind'];
  result: CaseResult;
  /** For a shown edit that is not the true one: the window text it would give (first 2,000 characters). */
  shownWindow?: string;
}

/** One case through `predictNextEdit` with `generator`, as an editor would run it right after the user's edit. */
export async function runCase(c: NextEditCase, generator: Generator): Promise<{ record: CaseRecord; outcome: NextEditOutcome }> {
  const history = new EditHistory();
  history.record(c.change);
  const outcome = await predictNextEdit(generator, { path: c.path, documentText: c.before, cursorOffset: c.cursorOffset, history });
  const reach = reachOf(c).kind;
  const base = { id: c.id, repo: c.repo, language: c.language, reach };
  if (outcome.kind === 'dropped') {
    return { record: { ...base, result: { kind: 'dropped', reason: outcome.reason, ms: outcome.ms, detail: outcome.detail } }, outcome };
  }
  const applied = applyWindowEdits(c.before, outcome.edits);
  const exact = applied === c.after;
  const record: CaseRecord = { ...base, result: { kind: 'shown', exact, ms: outcome.ms } };
  if (!exact) {
    const w = outcome.window;
    const lines = applied.split('\n');
    const delta = lines.length - c.before.split('\n').length;
    record.shownWindow = lines
      .slice(w.startLine, w.endLine + 1 + delta)
      .join('\n')
      .slice(0, 2000);
  }
  return { record, outcome };
}

export interface Tally {
  cases: number;
  /** Cases whose true next edit lies inside the window: the denominator of the rates. */
  inWindow: number;
  outsideWindow: number;
  noWindow: number;
  /** Shown, and applying the edits gives exactly `after` (in-window cases). */
  shownExact: number;
  /** Shown, but the result differs from `after` (all cases). */
  shownDifferent: number;
  /** Shown at all (all cases). */
  shown: number;
  /** Why in-window cases were not shown. */
  lossesInWindow: Partial<Record<NextEditDrop, number>>;
  /** Why any case was not shown. */
  losses: Partial<Record<NextEditDrop, number>>;
}

export function tally(records: readonly CaseRecord[]): Tally {
  const t: Tally = { cases: 0, inWindow: 0, outsideWindow: 0, noWindow: 0, shownExact: 0, shownDifferent: 0, shown: 0, lossesInWindow: {}, losses: {} };
  for (const r of records) {
    t.cases++;
    if (r.reach === 'inside') t.inWindow++;
    else if (r.reach === 'outsideWindow') t.outsideWindow++;
    else t.noWindow++;
    if (r.result.kind === 'shown') {
      t.shown++;
      if (r.result.exact && r.reach === 'inside') t.shownExact++;
      if (!r.result.exact) t.shownDifferent++;
    } else {
      const reason = r.result.reason;
      t.losses[reason] = (t.losses[reason] ?? 0) + 1;
      if (r.reach === 'inside') t.lossesInWindow[reason] = (t.lossesInWindow[reason] ?? 0) + 1;
    }
  }
  return t;
}

/** Every case through a generator made for it, one at a time, in order. */
export async function runCases(cases: readonly NextEditCase[], generatorFor: (c: NextEditCase) => Generator): Promise<CaseRecord[]> {
  const records: CaseRecord[] = [];
  for (const c of cases) records.push((await runCase(c, generatorFor(c))).record);
  return records;
}
