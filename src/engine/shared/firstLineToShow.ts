import { type FirstLine, firstLineEnd } from './types';

/** Letters, digits and `_`: a cut between two of them would split a word. */
const WORD = /[\p{L}\p{N}_]/u;

/**
 * What of an answer being written can be shown now as its first line (GenerateHooks.onFirstLine), or null:
 * - the first line with code on it, once its newline is written;
 * - or, once `partialLineMs` have passed since the request started (0: never), the line as far as it got, cut
 *   where a word ends, marked `partial`: a line a slow model is still writing shows instead of keeping the user
 *   waiting until it ends (up to `maxNewTokens` later), and the rest follows when written.
 *
 * `tokenTextEnds[i]` is where token i's text ends, in `text`'s terms (entries may run past `text`, which stop-string
 * holdback can leave shorter), with `tokenLogprobs` alongside; the line keeps the tokens that wrote it. Without
 * tokens (a server that sends no log-probabilities) any character boundary may be the cut.
 */
export function firstLineToShow(
  text: string,
  tokenLogprobs: readonly number[],
  tokenTextEnds: readonly number[],
  elapsedMs: number,
  partialLineMs: number,
): FirstLine | null {
  const end = firstLineEnd(text);
  if (end >= 0) {
    // The tokens up to the one that wrote the newline.
    const k = tokenTextEnds.findIndex((e) => e > end) + 1 || tokenTextEnds.length;
    return { text: text.slice(0, end), tokenLogprobs: tokenLogprobs.slice(0, k), tokenTextEnds: tokenTextEnds.slice(0, k) };
  }
  if (partialLineMs <= 0 || elapsedMs < partialLineMs) return null;
  const cut = lastWordEnd(text, tokenTextEnds);
  if (cut <= 0 || text.slice(0, cut).trim() === '') return null;
  const k = tokenTextEnds.findIndex((e) => e > cut);
  const kept = k < 0 ? tokenTextEnds.length : k;
  return { text: text.slice(0, cut), tokenLogprobs: tokenLogprobs.slice(0, kept), tokenTextEnds: tokenTextEnds.slice(0, kept), partial: true };
}

/** The last place in `text` where a word ends (at a token's end when there are tokens), or 0. */
function lastWordEnd(text: string, tokenTextEnds: readonly number[]): number {
  const candidates = tokenTextEnds.length > 0 ? tokenTextEnds.filter((e) => e <= text.length) : Array.from({ length: text.length }, (_, i) => i + 1);
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i];
    const before = text.charCodeAt(c - 1);
    // Never between the halves of a surrogate pair.
    if (before >= 0xd800 && before <= 0xdbff) continue;
    // At the text's end a word may go on in the next token; anything but a word character ends it.
    if (!isWordChar(charBefore(text, c)) || (c < text.length && !isWordChar(String.fromCodePoint(text.codePointAt(c) ?? 0)))) return c;
  }
  return 0;
}

/** The character (a whole code point) that ends at `at`. */
function charBefore(text: string, at: number): string {
  const low = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && at >= 2 ? text.slice(at - 2, at) : text[at - 1];
}

const isWordChar = (c: string): boolean => WORD.test(c);
