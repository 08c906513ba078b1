import type { CompletionFilter } from './filterContext';

/**
 * Small models fall into loops. Cuts at the third identical line in a row, and cuts a last line that ends
 * in the same chunk (1-16 characters) repeated 4 or more times down to one copy of it: the generation
 * stopped inside the loop. A repeated run on an earlier line (`# ----`, `0000`) was left by the model and
 * is kept.
 */
export const repetitionGuard: CompletionFilter = (text) => {
  const lines = text.split('\n');
  for (let i = 2; i < lines.length; i++) {
    if (lines[i].trim() !== '' && lines[i] === lines[i - 1] && lines[i] === lines[i - 2]) {
      text = lines.slice(0, i - 1).join('\n');
      break;
    }
  }
  const last = text.lastIndexOf('\n') + 1;
  return text.slice(0, last) + text.slice(last).replace(/(.{1,16}?)\1{3,}$/u, '$1');
};
