import type { Lexical } from './languages';

/** What is still open at the end of a text: brackets (innermost last) and a multi-line string or comment. */
export interface OpenTail {
  /** The closers of the brackets left open, innermost first (the order to append them in). */
  closers: string[];
  /** The closer of the multi-line string or block comment the text ends inside, or null. */
  inside: string | null;
  /** Closers that close no open bracket, plus single-line strings left unterminated at a line end. */
  damage: number;
  /**
   * Where the last closer that closed no open bracket, or closed a block comment outside any, is (-1: none):
   * the text started inside that block or comment.
   */
  lastStrayCloser: number;
  /** With a `mark`: the closers of the brackets open at the mark, innermost first. */
  openAtMark?: string[];
  /** With a `mark`: how many of those the text after the mark closes. */
  closedAfterMark?: number;
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
/** A `${` of a template literal: its `}` goes back into the template string. */
const TEMPLATE_EXPR = '}`';
const CHAR_LITERAL = /'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{1,3}|.)|[^\\'\n])'/y;

/**
 * Scans code roughly (strings and comments skipped, brackets counted) and reports what is left open at its
 * end. A prompt window is a slice of a file: it often ends inside a function, and a parser then wraps the
 * whole unfinished function, cursor included, in one error. Appending these closers gives the parser a
 * finished text, so the errors that remain are the ones the code has. A closer that closes nothing is
 * left to the parser to report (and counted as damage); one that skips open brackets closes them too.
 */
export function openTail(text: string, lex: Lexical, mark?: number): OpenTail {
  const stack: string[] = [];
  // At the mark (a cursor): the brackets open there, and later how many of them the text closes.
  let atMark: string[] | null = null;
  // Of the brackets open at the mark, how many are still open, and how many a matching closer closed (one
  // that skips open brackets closes them only for the parser: they stay the suggestion's to close).
  let live = 0;
  let closedAfter = 0;
  let str: Lexical['strings'][number] | null = null;
  let comment: string | null = null;
  let damage = 0;
  let lastStrayCloser = -1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i];
    if (mark !== undefined && atMark === null && i >= mark) {
      atMark = [...stack];
      live = stack.length;
    }
    if (comment !== null) {
      if (text.startsWith(comment, i)) {
        i += comment.length;
        comment = null;
      } else i++;
      continue;
    }
    if (str !== null) {
      if (ch === '\\' && !str.raw) i += 2;
      else if (str.template && ch === '$' && text[i + 1] === '{') {
        stack.push(TEMPLATE_EXPR);
        str = null;
        i += 2;
      } else if (text.startsWith(str.close, i)) {
        i += str.close.length;
        str = null;
      } else {
        if (ch === '\n' && !str.multiline) {
          str = null;
          damage++;
        }
        i++;
      }
      continue;
    }
    if (lex.lineComments.some((c) => text.startsWith(c, i))) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    // A block comment's closer outside any comment: the text started inside that comment.
    if (lex.blockComment && text.startsWith(lex.blockComment[1], i)) {
      lastStrayCloser = i;
      i += lex.blockComment[1].length;
      continue;
    }
    if (lex.blockComment && text.startsWith(lex.blockComment[0], i)) {
      comment = lex.blockComment[1];
      i += lex.blockComment[0].length;
      continue;
    }
    if (ch === "'" && lex.charLiterals) {
      CHAR_LITERAL.lastIndex = i;
      i = CHAR_LITERAL.test(text) ? CHAR_LITERAL.lastIndex : i + 1;
      continue;
    }
    if (ch === '/' && lex.regex && regexMayStart(text, i)) {
      const end = regexEnd(text, i);
      if (end > 0) {
        i = end;
        continue;
      }
    }
    const s = lex.strings.find((d) => text.startsWith(d.open, i));
    if (s) {
      str = s;
      i += s.open.length;
      continue;
    }
    const close = OPEN[ch];
    if (close) stack.push(close);
    else if (ch === ')' || ch === ']' || ch === '}') {
      let j = stack.length - 1;
      while (j >= 0 && stack[j] !== ch && !(ch === '}' && stack[j] === TEMPLATE_EXPR)) j--;
      if (j >= 0) {
        const back = stack[j] === TEMPLATE_EXPR;
        stack.length = j;
        if (atMark !== null && j < live) {
          closedAfter++;
          live = j;
        }
        if (back) str = lex.strings.find((d) => d.template) ?? null;
      } else {
        damage++;
        lastStrayCloser = i;
      }
    }
    i++;
  }
  if (str && !str.multiline) damage++;
  const inside = comment ?? (str?.multiline ? str.close : null);
  const tail: OpenTail = { closers: [...stack].reverse(), inside, damage, lastStrayCloser };
  if (mark === undefined) return tail;
  atMark ??= [...stack];
  return { ...tail, openAtMark: [...atMark].reverse(), closedAfterMark: closedAfter };
}

/** Words after which `/` starts an expression, so a regular expression rather than a division. */
const BEFORE_EXPRESSION = /(?:^|[^\w$.])(?:return|typeof|instanceof|in|of|new|delete|void|throw|case|do|else|yield|await)$/;

/** Whether a `/` at `i` (not a comment) is where an expression may start: after an operator, an opener, or a keyword. */
function regexMayStart(text: string, i: number): boolean {
  let j = i - 1;
  while (j >= 0 && (text[j] === ' ' || text[j] === '\t')) j--;
  if (j < 0 || text[j] === '\n') return true;
  if ('(,=:[!&|?{};+-*%<>~^'.includes(text[j])) return true;
  return BEFORE_EXPRESSION.test(text.slice(Math.max(0, j - 11), j + 1));
}

/** The end (after its flags) of the regular expression literal opening at `i`, or -1 when none closes on its line. */
function regexEnd(text: string, i: number): number {
  let inClass = false;
  for (let k = i + 1; k < text.length; k++) {
    const c = text[k];
    if (c === '\n') return -1;
    if (c === '\\') k++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      let end = k + 1;
      while (end < text.length && /[a-z]/i.test(text[end])) end++;
      return end;
    }
  }
  return -1;
}

/**
 * The text to append to a window so that it ends with nothing open: the closer of a multi-line string or
 * comment it ends inside (only when `closeInside`: a suggestion that opens one is not closed for it),
 * then one bracket closer a line.
 */
export function closingText(tail: OpenTail, closeInside: boolean): string {
  const parts = closeInside && tail.inside ? [tail.inside, ...tail.closers] : tail.closers;
  return parts.length === 0 ? '' : `\n${parts.join('\n')}\n`;
}
