import { CompletionService } from '../../src/completion/completionService';
import type { CompletionSettings } from '../../src/completion/types';
import { documentContext, positionAt, textSource } from '../../src/completion/context/documentContext';
import { fitBudget } from '../../src/completion/context/fitBudget';
import type { FilterContext } from '../../src/completion/filters/filterContext';
import { FILTERS } from '../../src/completion/filters/pipeline';
import { inlineDecodeOptions, inlineMode } from '../../src/completion/presets';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import type { SyntaxRefiner } from '../../src/completion/syntax/syntaxRefiner';
import { checkWindow } from '../../src/completion/syntax/syntaxWindow';
import { OracleGenerator, oracleAnswer } from './oracleGenerator';
import type { OraclePosition } from './positions';

export type OracleOutcome = 'kept' | 'cut' | 'dropped' | 'changed';

export interface OracleResult {
  position: OraclePosition;
  contextTokens: number;
  outcome: OracleOutcome;
  /** The first step that changed the perfect answer: a filter's name, 'syntax', or null when kept. */
  stage: string | null;
  /** What the oracle answered and what the pipeline showed. */
  answered: string;
  shown: string | null;
}

/** The stand-in FIM template: the pipeline's filters and syntax do not depend on it. */
const TEMPLATE = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));

/**
 * Runs one position through CompletionService with the oracle as the model, on an explicit trigger (the
 * gate out of the way), and finds which step lost the perfect answer by replaying the steps one by one on
 * the same context (checked against the service's own result).
 */
export async function runOracle(
  p: OraclePosition,
  settings: CompletionSettings,
  contextTokens: number,
  charsPerToken: number,
  syntax: SyntaxRefiner | null,
): Promise<OracleResult> {
  const generator = new OracleGenerator(p.truth);
  const service = new CompletionService(
    generator,
    () => TEMPLATE,
    () => settings,
    () => ({ contextTokens, charsPerToken }),
    syntax,
  );
  const doc = textSource(p.doc, p.cut);
  const cursor = positionAt(p.doc, p.cursor);
  const out = await service.complete({ doc, cursor, languageId: p.language, path: p.path, explicit: true });
  const shown = out.items[0] ?? null;

  // The same context the service built (a fresh service: no remembered window start).
  const fit = fitBudget(settings.budget, 0, contextTokens, settings.preset.maxNewTokens, charsPerToken);
  const ctx = documentContext(doc, cursor, fit.budget);
  const mode = inlineMode(ctx.linePrefix, ctx.lineSuffix);
  const answered = oracleAnswer(p.truth, inlineDecodeOptions(settings.preset, mode, ctx.linePrefix).maxLines ?? 0);
  const check = checkWindow(doc, cursor, ctx, p.language);
  const fctx: FilterContext = { ...ctx, openAtCursor: check.openAtCursor, closedAfterCursor: check.closedAfterCursor, finishReason: 'eos' };
  let text: string | null = answered;
  let stage: string | null = null;
  for (const [name, filter] of FILTERS) {
    const next: string | null = filter(text, fctx);
    if (stage === null && !same(next, text)) stage = name;
    text = next;
    if (text === null) break;
  }
  if (text !== null && syntax && !check.prose) {
    const refined = syntax.refine(text, check.window);
    const next = refined === null || refined.trim() === '' ? null : refined;
    if (stage === null && !same(next, text)) stage = 'syntax';
    text = next;
  }
  if (text !== shown || answered !== generator.answered)
    throw new Error(`oracle replay differs from the service at ${p.path}:${p.cursor}: ${JSON.stringify(text)} vs ${JSON.stringify(shown)}`);
  const want = answered.trimEnd();
  const outcome: OracleOutcome = shown === null ? 'dropped' : shown.trimEnd() === want ? 'kept' : want.startsWith(shown.trimEnd()) ? 'cut' : 'changed';
  return { position: p, contextTokens, outcome, stage: outcome === 'kept' ? null : stage, answered, shown };
}

/** Two steps' texts are the same suggestion (trailing whitespace aside: dropTrivial trims it). */
function same(a: string | null, b: string | null): boolean {
  return a === b || (a !== null && b !== null && a.trimEnd() === b.trimEnd());
}
