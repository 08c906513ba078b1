import type { GenerateRule } from './ruleContext';

/** Last rule: whitespace is no result, and trailing blank lines are not part of one. */
export const dropEmpty: GenerateRule = (text) => (text.trim() === '' ? null : text.trimEnd());
