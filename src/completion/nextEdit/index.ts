/**
 * The editor-free core of next-edit suggestions, in the order a request uses it: the edit history and the window
 * around the cursor feed the Sweep prompt; the model's answer becomes edits; the checks decide whether they show.
 */

export { checkEdits, type EditCheckInput, EDIT_REJECTIONS, type EditCheckResult, type EditRejection, isTooLarge } from './checkEdits';
export {
  type DocumentChange,
  DEFAULT_HISTORY_LIMITS,
  EditHistory,
  type EditHistoryLimits,
  type HistoryBlock,
  type LatestEdit,
  limitLines,
} from './editHistory';
export {
  DEFAULT_WINDOW_LIMITS,
  type EditableWindow,
  editableWindow,
  linesAround,
  originalWindowText,
  type RecentEdit,
  type WindowLimits,
} from './editableWindow';
export { answerWindowText, diffLines, type ParsedAnswer, parseAnswer, type WindowEdit, windowEdits } from './parseAnswer';
export { buildSweepPrompt, promptPath, type RelatedFile, SWEEP_STOP_STRINGS, type SweepPromptInput } from './sweepPrompt';
