import { normalizeLineEndings } from '../../filters/normalizeLineEndings';
import { repetitionGuard } from '../../filters/repetitionGuard';
import { cutRepeatedBlock } from './cutRepeatedBlock';
import { dropEmpty } from './dropEmpty';
import { dropParseErrors } from './dropParseErrors';
import { dropStartOutsideBlock } from './dropStartOutsideBlock';
import { dropUnclosedBlock } from './dropUnclosedBlock';
import { dropUnfinishedLastLine } from './dropUnfinishedLastLine';
import type { GenerateRule, GenerateRuleContext } from './ruleContext';
import { stopAtBlockEnd } from './stopAtBlockEnd';

/**
 * Generate from Selection's rules, in the order they run; each sees the previous one's output, null stops.
 * The inline filters' line-ending and line-repetition rules are shared (they look at the text alone).
 * The loop cuts run before the block cut: a copy of a block inside the body would otherwise be kept.
 */
export const GENERATE_RULES: ReadonlyArray<readonly [string, GenerateRule]> = [
  ['normalizeLineEndings', (t) => normalizeLineEndings(t, NO_FILTER_CONTEXT)],
  ['dropUnfinishedLastLine', dropUnfinishedLastLine],
  ['dropStartOutsideBlock', dropStartOutsideBlock],
  ['repetitionGuard', (t) => repetitionGuard(t, NO_FILTER_CONTEXT)],
  ['cutRepeatedBlock', cutRepeatedBlock],
  ['stopAtBlockEnd', stopAtBlockEnd],
  ['dropUnclosedBlock', dropUnclosedBlock],
  ['dropParseErrors', dropParseErrors],
  ['dropEmpty', dropEmpty],
];

/** The two shared filters read nothing of their context. */
const NO_FILTER_CONTEXT = { linePrefix: '', lineSuffix: '', lineAbove: '', nextLines: [], indent: '' };

export interface ProcessedResult {
  /** What would be inserted; null when a rule dropped the result. */
  text: string | null;
  /** The rule that dropped it, if one did (dropUnclosedBlock and dropParseErrors: the review offers "Insert anyway"). */
  droppedBy: string | null;
  /** The text as it reached the rule that dropped it. */
  beforeDrop: string | null;
}

export function processGenerated(raw: string, ctx: GenerateRuleContext): ProcessedResult {
  let text: string = raw;
  for (const [name, rule] of GENERATE_RULES) {
    const out = rule(text, ctx);
    if (out === null) return { text: null, droppedBy: name, beforeDrop: text };
    text = out;
  }
  return { text, droppedBy: null, beforeDrop: null };
}
