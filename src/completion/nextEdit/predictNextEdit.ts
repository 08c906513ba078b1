/**
 * One next-edit request, start to end, for any backend behind the `Generator` seam: the window around the cursor,
 * the Sweep prompt (history, related files, original and current window), one greedy generation that stops where
 * the rewritten window ends, the answer parsed into edits, and the checks. The editor, the CLI and the evaluation
 * all run this one function, so what is measured is what is shown. No `vscode` import.
 */
import type { DecodeOptions } from '../../engine/shared/decodeOptions';
import type { Generator } from '../generator';
import { checkEdits, type EditRejection } from './checkEdits';
import type { EditHistory } from './editHistory';
import { editableWindow, type EditableWindow, originalWindowText, type WindowLimits } from './editableWindow';
import { parseAnswer, type WindowEdit } from './parseAnswer';
import { rejoinedWindow } from './rejoin';
import { buildSweepPrompt, type RelatedFile, SWEEP_STOP_STRINGS } from './sweepPrompt';

/** Why no edit is shown: a check's reason, or a step before the checks. */
export type NextEditDrop = EditRejection | 'noWindow' | 'promptRefused' | 'unparsable' | 'cancelled' | 'failed';

export interface NextEditRequest {
  /** Workspace-relative path with "/" (the prompt's file headers). */
  path: string;
  documentText: string;
  cursorOffset: number;
  history: EditHistory;
  related?: readonly RelatedFile[];
  parsesNoWorse?: (before: string, after: string) => boolean;
  windowLimits?: Partial<WindowLimits>;
  signal?: AbortSignal;
}

export type NextEditOutcome =
  | { kind: 'edits'; edits: WindowEdit[]; window: EditableWindow; prompt: string; answer: string; ms: number; stoppedEarly?: boolean }
  | { kind: 'dropped'; reason: NextEditDrop; window?: EditableWindow; prompt?: string; answer?: string; detail?: string; ms: number };

/**
 * The decode settings of a next edit: greedy (the answer is mostly a copy of the window, and a sampled copy only
 * adds typos), prompt lookup drafting long runs from the window, no line limit or loop stop (a window may repeat
 * lines legitimately), and room for the window plus some added lines. The time budget bounds a slow model: a
 * truncated answer keeps only what matches the window, so it is safe.
 */
function nextEditDecodeOptions(windowChars: number): Partial<DecodeOptions> {
  return {
    temperature: 0,
    maxNewTokens: Math.min(1024, Math.ceil(windowChars / 2.5) + 96),
    stop: [...SWEEP_STOP_STRINGS],
    maxLines: 0,
    timeBudgetMs: 4000,
    speculativeTokens: 16,
    stopOnLoop: false,
    tokenHealing: false,
    stopOnSpecialTokens: true,
    numBeams: 1,
    numReturnSequences: 1,
  };
}

/** The prompt alone (for `--prompt-only` and Show Prompt), or why there is none. */
export function nextEditPrompt(req: NextEditRequest): { prompt: string; window: EditableWindow } | { reason: 'noWindow' | 'promptRefused' } {
  const window = editableWindow(req.documentText, req.cursorOffset, req.windowLimits);
  if (!window) return { reason: 'noWindow' };
  const latest = req.history.latestEdit(req.path);
  const prompt = buildSweepPrompt({
    path: req.path,
    related: req.related ?? [],
    history: req.history.blocks(),
    originalWindow: originalWindowText(req.documentText, window, latest),
    currentWindow: window.text,
  });
  return prompt === null ? { reason: 'promptRefused' } : { prompt, window };
}

export async function predictNextEdit(generator: Generator, req: NextEditRequest): Promise<NextEditOutcome> {
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  const built = nextEditPrompt(req);
  if ('reason' in built) return { kind: 'dropped', reason: built.reason, ms: ms() };
  const { prompt, window } = built;
  let answer: string;
  let endedAtStop: boolean;
  // The answer streams in; once it has made its change and copied the window again for a few lines, the rest
  // is the window's and generation stops (rejoin.ts).
  let streamed = '';
  let rejoined: string | null = null;
  const early = new AbortController();
  const signal = req.signal ? AbortSignal.any([req.signal, early.signal]) : early.signal;
  const onText = (delta: string) => {
    if (rejoined !== null) return;
    streamed += delta;
    if (!delta.includes('\n')) return;
    rejoined = rejoinedWindow(window.text, streamed.replace(/\r\n?/g, '\n'));
    if (rejoined !== null) early.abort();
  };
  try {
    const result = await generator.generate(prompt, nextEditDecodeOptions(window.text.length), { signal, onText });
    if (req.signal?.aborted) return { kind: 'dropped', reason: 'cancelled', window, prompt, ms: ms() };
    if (rejoined !== null) {
      answer = `${rejoined}\n<|file_sep|>`;
      endedAtStop = true;
    } else {
      if (result.finishReason === 'cancelled') return { kind: 'dropped', reason: 'cancelled', window, prompt, ms: ms() };
      answer = result.text;
      endedAtStop = result.finishReason === 'stop' || result.finishReason === 'eos';
    }
  } catch (err) {
    if (req.signal?.aborted) return { kind: 'dropped', reason: 'cancelled', window, prompt, ms: ms() };
    return { kind: 'dropped', reason: 'failed', window, prompt, detail: err instanceof Error ? err.message : String(err), ms: ms() };
  }
  const parsed = parseAnswer(answer, window, endedAtStop);
  if (!parsed) return { kind: 'dropped', reason: 'unparsable', window, prompt, answer, ms: ms() };
  const checked = checkEdits({
    documentText: req.documentText,
    window,
    edits: parsed.edits,
    lastEdit: req.history.latestEdit(req.path),
    parsesNoWorse: req.parsesNoWorse,
  });
  if (!checked.ok) return { kind: 'dropped', reason: checked.reason, window, prompt, answer, ms: ms() };
  return { kind: 'edits', edits: checked.edits, window, prompt, answer, ms: ms(), ...(rejoined !== null ? { stoppedEarly: true } : {}) };
}
