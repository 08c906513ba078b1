/**
 * What the confidence gate knows about one suggestion: the model's own log-probabilities for the tokens it
 * chose, and cheap facts about the place it goes. Model-agnostic: any generator that reports per-token
 * log-probabilities (our engine, a server with logprobs) can be gated.
 */
export interface GateInput {
  /** The suggestion as it would be shown (after the filters). */
  text: string;
  /** The model's raw output, and per token its log-probability and the raw text length after it. */
  raw: string;
  tokenLogprobs: readonly number[];
  tokenTextEnds: readonly number[];
  linePrefix: string;
  lineSuffix: string;
  /** The nearest non-blank line above the cursor line ('' at the top of the window). */
  lineAbove: string;
  languageId: string;
}

/** Feature names in the order gateFeatures returns them; calibration files name the ones they use. */
export const FEATURE_NAMES = [
  'first_line_mean_logprob',
  'first_line_min_logprob',
  'first_token_logprob',
  'mean_logprob',
  'first_line_tokens',
  'first_line_chars',
  'lines',
  'cut_by_filters',
  'cursor_in_word',
  'line_blank',
  'code_after_cursor',
  'opener_above',
  'opener_on_line',
  'line_chars_typed',
  'lang_python',
  'lang_js_ts',
] as const;

export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Log-probabilities below this are clamped: one near-impossible token should not swamp the rest. */
const FLOOR = -12;
const OPENER = /(?:[:{([]|=>)\s*$/;

export function gateFeatures(x: GateInput): Record<FeatureName, number> {
  const span = firstLineSpan(x.raw);
  const lps: number[] = [];
  let start = 0;
  for (let i = 0; i < x.tokenLogprobs.length; i++) {
    const end = x.tokenTextEnds[i] ?? start;
    if (start < span.end && end > span.start) lps.push(clamp(x.tokenLogprobs[i]));
    start = end;
  }
  const all = x.tokenLogprobs.map(clamp);
  const line = lps.length > 0 ? lps : all;
  const shownFirst = x.text.split('\n').find((l) => l.trim() !== '') ?? '';
  const rawFirst = x.raw.slice(span.start, span.end);
  const typed = x.linePrefix.trim();
  const lang = x.languageId;
  return {
    first_line_mean_logprob: mean(line),
    first_line_min_logprob: line.length ? Math.min(...line) : FLOOR,
    first_token_logprob: all.length ? all[0] : FLOOR,
    mean_logprob: mean(all),
    first_line_tokens: Math.log1p(line.length),
    first_line_chars: Math.log1p(shownFirst.trim().length),
    lines: Math.log1p(Math.min(10, x.text.split('\n').length - 1)),
    cut_by_filters: shownFirst.trim().length < rawFirst.trim().length ? 1 : 0,
    cursor_in_word: /\w$/.test(x.linePrefix) ? 1 : 0,
    line_blank: typed === '' ? 1 : 0,
    code_after_cursor: x.lineSuffix.trim() !== '' ? 1 : 0,
    opener_above: typed === '' && OPENER.test(x.lineAbove) ? 1 : 0,
    opener_on_line: typed !== '' && OPENER.test(x.linePrefix) ? 1 : 0,
    line_chars_typed: Math.log1p(typed.length),
    lang_python: lang === 'python' ? 1 : 0,
    lang_js_ts: /^(javascript|typescript)(react)?$/.test(lang) ? 1 : 0,
  };
}

/** The raw text's first line with code on it (a block suggestion may start with a newline). */
function firstLineSpan(raw: string): { start: number; end: number } {
  const m = /\S/.exec(raw);
  if (!m) return { start: 0, end: raw.length };
  const start = raw.lastIndexOf('\n', m.index) + 1;
  const nl = raw.indexOf('\n', m.index);
  return { start, end: nl < 0 ? raw.length : nl };
}

function clamp(lp: number): number {
  return Number.isFinite(lp) ? Math.max(FLOOR, lp) : FLOOR;
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : FLOOR;
}
