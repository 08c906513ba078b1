// The eval sets (tools/model/eval/*.jsonl) as every quality bench reads them: one position per line, and one
// completion of it through a fresh pipeline.
import * as fs from 'node:fs';
import { CompletionService } from '../src/completion/completionService';
import type { Generator } from '../src/completion/generator';
import type { FimTemplate } from '../src/completion/prompt/fimTemplates';
import type { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import { positionAt, textSource } from '../src/completion/context/documentContext';
import type { CompletionOutcome, CompletionSettings, ModelTraits, TextSource } from '../src/completion/types';

/** One position of an eval set: a window of a file, cut at the cursor, and what the author wrote next. */
export interface EvalSample {
  path: string;
  language: string;
  prefix: string;
  suffix: string;
  expected: string;
  /** `line-start` (a fresh line) or `mid-line`. */
  kind?: string;
}

/** VS Code's language ids of the eval sets' languages (tree-sitter grammars are loaded by them). */
export const LANGUAGE_IDS: Record<string, string> = { python: 'python', javascript: 'javascript', typescript: 'typescript' };

/** The first `limit` positions of an eval set file. */
export function readEvalSamples(file: string, limit = Infinity): EvalSample[] {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(0, limit)
    .map((l) => JSON.parse(l) as EvalSample);
}

/** Characters of a file the eval-set makers keep before the cursor and after its line (tools/model/make_*eval.py). */
const PREFIX_CHARS = 1500;
const SUFFIX_CHARS = 500;
/** The sets' longest line: make_external_eval.py moves a cut prefix's start on to the next line start. */
const MAX_LINE = 200;

/**
 * Where a sample's window was cut from its file: above when the prefix is as long as the makers keep
 * (less at most the line its start was moved past), below when the suffix is. The pipeline then treats
 * the window's top as what it is: maybe a line's tail inside a block or a string, not the file's start.
 */
export function sampleCut(s: Pick<EvalSample, 'prefix' | 'suffix'>): TextSource['cut'] {
  return { above: s.prefix.length > PREFIX_CHARS - MAX_LINE, below: s.suffix.length >= SUFFIX_CHARS };
}

/** An automatic-trigger completion at the sample's cursor (the prefix and suffix joined). */
export function completeSample(service: CompletionService, s: EvalSample): Promise<CompletionOutcome> {
  const text = s.prefix + s.suffix;
  return service.complete({
    doc: textSource(text, sampleCut(s)),
    cursor: positionAt(text, s.prefix.length),
    languageId: LANGUAGE_IDS[s.language] ?? s.language,
    path: s.path,
    explicit: false,
  });
}

/** What a fresh pipeline is built from (CompletionService's constructor arguments). */
export interface PipelineParts {
  generator: Generator;
  template: FimTemplate | null;
  settings: CompletionSettings;
  traits: ModelTraits;
  syntax: SyntaxRefiner;
}

/** Each sample completed by a fresh pipeline: no cache or in-flight reuse carries one position into the next. */
export async function completeEachFresh(parts: PipelineParts, samples: readonly EvalSample[]): Promise<CompletionOutcome[]> {
  const out: CompletionOutcome[] = [];
  for (const s of samples) {
    const service = new CompletionService(
      parts.generator,
      () => parts.template,
      () => parts.settings,
      () => parts.traits,
      parts.syntax,
    );
    out.push(await completeSample(service, s));
  }
  return out;
}
