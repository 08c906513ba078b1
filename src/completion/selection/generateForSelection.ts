import type { DecodeOptions } from '../../engine/shared/decodeOptions';
import type { FinishReason, GenerationStats } from '../../engine/shared/types';
import type { ChunkRing } from '../context/chunkRing';
import { documentContext, type WindowBudget } from '../context/documentContext';
import { fitBudget } from '../context/fitBudget';
import { type ContextSupply, extraContext } from '../context/repo/extraContext';
import type { Generator } from '../generator';
import type { GeneratePreset } from '../presets';
import { buildPrompt } from '../prompt/buildPrompt';
import type { FimTemplate } from '../prompt/fimTemplates';
import type { SyntaxRefiner, SyntaxWindow } from '../syntax/syntaxRefiner';
import { checkWindow } from '../syntax/syntaxWindow';
import type { ContextSettings, TextSource } from '../types';
import { insertAt } from '../textOverlay';
import { bodyLead } from './bodyLead';
import { type GeneratePlan, planGeneration, type SelectionRange } from './plan';
import { type ProcessedResult, processGenerated } from './rules/pipeline';
import { syntaxProbe } from './syntaxProbe';

/** What Generate from Selection shares with inline completion for one backend. */
export interface SelectionInputs {
  generator: Generator;
  template: FimTemplate | null;
  /** The model's context in tokens and its tokenizer's characters per token (measured), to size the prompt. */
  contextTokens: number;
  charsPerToken?: number;
  /** The inline pipeline's windows and its extra-context budget (`ghostline.context.*`). */
  budget: WindowBudget;
  extraContextChars: number;
  context: ContextSettings;
  preset: GeneratePreset;
  /** Chunks of other files the user worked in (the inline pipeline's ring). */
  ring?: ChunkRing;
  /** The inline pipeline's repository context. */
  repo?: ContextSupply['repo'];
  syntax: SyntaxRefiner | null;
}

export interface SelectionRequest {
  doc: TextSource;
  selection: SelectionRange;
  languageId: string;
  /** Workspace-relative path, for models with file separators. */
  path: string;
  /** Sampling seed (Regenerate draws another); the preset's when absent. */
  seed?: number;
  /** Keep a result that adds parse errors (the review's "Insert anyway"). */
  keepParseErrors?: boolean;
  signal?: AbortSignal;
  /** One level of indentation where the file shows none (the editor's tab size and spaces setting); 4 spaces when absent. */
  indentUnit?: string;
  /** The model's text so far, as it streams (before the rules: the review shows it growing). */
  onText?: (soFar: string) => void;
}

export interface SelectionOutcome extends ProcessedResult {
  plan: GeneratePlan;
  /** The model's text, after the body lead (bodyLead.ts) when there is one. */
  raw: string;
  finishReason: FinishReason;
  stats: GenerationStats;
  /** From the request to the first complete non-blank line of the model's text (null: none came). */
  firstLineMs: number | null;
  totalMs: number;
  /** The window the result was generated and checked in (cursor at the insertion point). */
  window: SyntaxWindow;
}

/**
 * Generate from Selection without an editor: the plan (plan.ts), the inline pipeline's context windows and
 * FIM prompt with the extra chunks, the generate preset with its limits, then the rules
 * (rules/pipeline.ts). The VS Code command, the evaluation (bench/qualityGenerate.ts) and tests drive it.
 */
export async function generateForSelection(
  inputs: SelectionInputs,
  req: SelectionRequest,
  now: () => number = () => performance.now(),
): Promise<SelectionOutcome> {
  const t0 = now();
  const plan = planGeneration(req.doc, req.selection);
  const { template, preset } = inputs;
  inputs.syntax?.prepare(req.languageId);
  const fit = fitBudget(inputs.budget, inputs.extraContextChars, inputs.contextTokens, preset.maxNewTokens, inputs.charsPerToken, inputs.context.maxShare);
  // The prompt is asked at the body's start when the plan knows where that is (bodyLead.ts); the rules and the
  // review see the lead as the result's first characters, inserted at the plan's point like the rest.
  const lead = bodyLead(req.doc, plan, req.indentUnit);
  const led = lead ? insertAt(req.doc, plan.insertAt, lead) : null;
  const ctx = documentContext(req.doc, plan.insertAt, fit.budget);
  const promptCtx = led ? documentContext(led.doc, led.cursor, fit.budget) : ctx;
  const extra = extraContext({ ring: inputs.ring, repo: inputs.repo }, fit.extraChars, req.path, promptCtx, (source) => inputs.context.sources[source]);
  const built = buildPrompt(promptCtx, template, extra, req.path, { languageId: req.languageId });
  const options: Partial<DecodeOptions> = {
    ...preset,
    stop: [...preset.stop, ...(template?.stopTokens ?? [])],
    // After a non-blank insertion line the result starts on the next line: that empty first line is not counted.
    maxLines: preset.maxLines > 0 && promptCtx.linePrefix.trim() !== '' ? preset.maxLines + 1 : preset.maxLines,
    seed: req.seed ?? preset.seed,
  };
  let soFar = lead;
  let firstLineMs: number | null = null;
  const r = await inputs.generator.generate(built.prompt, options, {
    signal: req.signal,
    infill: { prefix: promptCtx.prefix, suffix: promptCtx.lineSuffix + promptCtx.suffix, middle: promptCtx.linePrefix, extra },
    onText: (d) => {
      soFar += d;
      if (firstLineMs === null && /\S[^\n]*\n/.test(soFar.slice(lead.length))) firstLineMs = now() - t0;
      req.onText?.(soFar);
    },
  });
  // Tree-sitter judges the result in the inline checks' wider window, which starts at a top-level line: the
  // prompt's window may start inside a docstring or a class, where the block the result is in cannot be found.
  const window = checkWindow(req.doc, plan.insertAt, ctx, req.languageId).window;
  // The grammar loads lazily; the generation took longer than loading it, but a first use may still wait here.
  if (inputs.syntax) await inputs.syntax.ready(req.languageId);
  const processed =
    r.finishReason === 'cancelled'
      ? { text: null, droppedBy: 'cancelled', beforeDrop: null }
      : processGenerated(lead + r.text, {
          above: ctx.prefix + ctx.linePrefix,
          below: ctx.lineSuffix + ctx.suffix,
          indent: ctx.indent,
          finishReason: r.finishReason,
          syntax: syntaxProbe(inputs.syntax, window),
          keepParseErrors: req.keepParseErrors ?? false,
        });
  return { ...processed, plan, raw: lead + r.text, finishReason: r.finishReason, stats: r.stats, firstLineMs, totalMs: now() - t0, window };
}
