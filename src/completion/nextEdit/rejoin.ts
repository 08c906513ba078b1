/**
 * Stopping a next-edit answer early. The model rewrites the whole window, but after its change it only copies the
 * rest: once its last few written lines equal a run of the window's lines below the change, the rest of the
 * answer is known (the window's remaining lines) and every token spent writing it is waiting the user pays for.
 * A run of blank lines or lone brackets proves nothing, so two of its lines must have some code on them: a new
 * function whose body is one line like the function below it (`pass`, then blank lines) must not end it early.
 * Only the first change is found this way: a second change further down is asked for after the first is
 * applied. No `vscode` import.
 */

/** Lines the answer must have rejoined the window for. */
const REJOIN_LINES = 3;
/** A run counts only when two of its lines have at least this many non-blank characters. */
const SUBSTANTIAL_CHARS = 6;
const SUBSTANTIAL_LINES = 2;

/**
 * The whole new window when the answer so far (LF, complete lines only are used) has made a change and then
 * rejoined the window for REJOIN_LINES lines; null while it has not.
 */
export function rejoinedWindow(windowText: string, answerSoFar: string, k = REJOIN_LINES): string | null {
  const lastBreak = answerSoFar.lastIndexOf('\n');
  if (lastBreak < 0) return null;
  const answer = answerSoFar.slice(0, lastBreak).split('\n');
  const window = windowText.split('\n');
  // Lines copied unchanged from the top: the change starts after them.
  let same = 0;
  while (same < answer.length && same < window.length && answer[same] === window[same]) same++;
  if (same === answer.length || answer.length - same < k) return null;
  const tail = answer.slice(answer.length - k);
  if (tail.filter((line) => line.trim().length >= SUBSTANTIAL_CHARS).length < Math.min(SUBSTANTIAL_LINES, k)) return null;
  // The run must start in the window at or after the change and in the answer after the change's first line.
  if (answer.length - k <= same) return null;
  for (let j = same; j + k <= window.length; j++) {
    let match = true;
    for (let i = 0; i < k && match; i++) match = window[j + i] === tail[i];
    if (match) return [...answer, ...window.slice(j + k)].join('\n');
  }
  return null;
}
