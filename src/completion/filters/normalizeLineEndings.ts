import { toLf } from '../lineEndings';
import type { CompletionFilter } from './filterContext';

/** First filter: the model's "\r\n" (or lone "\r") becomes "\n", as the filters after it expect (lineEndings.ts). */
export const normalizeLineEndings: CompletionFilter = (text) => toLf(text);
