// The Generate from Selection part of `npm run eval:quality` (alone: `npm run eval:quality -- --generate`):
// on held-out functions (the eval sets' files, which the default model never saw), select the signature and
// docstring (Python) or the doc comment and signature (JavaScript/TypeScript), generate the body through
// src/completion/selection/generateForSelection.ts exactly as the command does, and measure: the share that gives a
// result, and of the results the share that parses (the file with it has no more tree-sitter errors than
// the author's) and that ends inside the function (nothing of it runs past the function, and the function does not swallow the code after it),
// loops (a repeated line or block left in the result; also counted in the raw model text), edit similarity
// to the author's body, and the time to the first line. Writes bench/results/generate-quality.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Node, Parser } from '@vscode/tree-sitter-wasm';
import { positionAt, textSource } from '../src/completion/context/documentContext';
import { generateForSelection, type SelectionInputs } from '../src/completion/selection/generateForSelection';
import type { Generator as Backend } from '../src/completion/generator';
import { cutRepeatedBlock } from '../src/completion/selection/rules/cutRepeatedBlock';
import { repetitionGuard } from '../src/completion/filters/repetitionGuard';
import { GENERATE_PRESET } from '../src/completion/presets';
import { pickFimTemplate } from '../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../src/completion/settings';
import { grammarWasm, loadLanguage, loadRuntime, runtimeWasm } from '../src/completion/syntax/grammarLoader';
import { grammarFor } from '../src/completion/syntax/languages';
import { collectErrors } from '../src/completion/syntax/parseErrors';
import { SyntaxRefiner } from '../src/completion/syntax/syntaxRefiner';
import type { Engine } from '../src/engine/worker/engine';
import { editSimilarity } from './editSimilarity';
import { readEvalSamples } from './evalSet';
import { median, percentile, round } from './stats';

/** One held-out function: the file, what is selected, and the author's body (removed from the file). */
export interface HeldOutFunction {
  set: string;
  path: string;
  language: string;
  /** The file with the body removed. */
  doc: string;
  selStart: number;
  /** End of the selection = where the body was. */
  selEnd: number;
  body: string;
}

const FUNCTION_TYPES = new Set([
  'function_definition',
  'function_declaration',
  'method_definition',
  'generator_function_declaration',
  'function_expression',
  'arrow_function',
]);
/** What holds a JS/TS function as a statement, for the doc comment above it: `export`, `const f = () => {}`. */
const HOLDER_TYPES = new Set(['export_statement', 'variable_declarator', 'lexical_declaration', 'variable_declaration']);
/** Bodies the eval asks for: 1-30 lines, at most 1,500 characters (the generate preset's 256 tokens hold about 700). */
const MAX_BODY_LINES = 30;
const MAX_BODY_CHARS = 1500;

async function parserFor(language: string): Promise<Parser> {
  const spec = grammarFor(language)!;
  const ts = await loadRuntime(runtimeWasm());
  const parser = new ts.Parser();
  parser.setLanguage(await loadLanguage(ts, grammarWasm(spec.grammar)));
  return parser;
}

function* walk(n: Node): Generator<Node> {
  yield n;
  for (const c of n.children) if (c) yield* walk(c);
}

/**
 * The functions of a file that have a docstring (Python) or a `/** ... *\/` comment right above (JS/TS). The eval
 * sets hold windows of files (1,500 characters before a point, 500 after), so the text may start or end in
 * the middle of code: a function is taken when it and its doc comment parse cleanly, whatever the rest does
 * (the parse check compares the file with the result against the file with the author's body).
 */
export function functionsOf(parser: Parser, set: string, file: string, language: string, text: string): HeldOutFunction[] {
  const tree = parser.parse(text);
  if (!tree) return [];
  const out: HeldOutFunction[] = [];
  try {
    for (const fn of walk(tree.rootNode)) {
      if (!FUNCTION_TYPES.has(fn.type) || fn.hasError) continue;
      const body = fn.childForFieldName('body');
      if (!body) continue;
      let selStart: number;
      let selEnd: number;
      if (language === 'python') {
        const first = body.namedChildren[0];
        if (first?.type !== 'expression_statement' || first.namedChildren[0]?.type !== 'string' || body.namedChildren.length < 2) continue;
        selStart = text.lastIndexOf('\n', fn.startIndex - 1) + 1;
        selEnd = first.endIndex;
      } else {
        if (body.type !== 'statement_block' || body.namedChildren.length === 0) continue;
        let holder: Node | null = fn.type === 'function_expression' ? null : fn;
        while (holder?.parent && HOLDER_TYPES.has(holder.parent.type)) holder = holder.parent;
        // An arrow function is held only as a declaration's value (`const f = () => {`), not as an argument.
        if (fn.type === 'arrow_function' && holder === fn) holder = null;
        const comment = holder?.previousSibling;
        if (comment?.type !== 'comment' || !comment.text.startsWith('/**') || text.slice(comment.endIndex, holder!.startIndex).trim() !== '') continue;
        selStart = text.lastIndexOf('\n', comment.startIndex - 1) + 1;
        selEnd = body.startIndex + 1;
        if (text.slice(selEnd, text.indexOf('\n', selEnd)).trim() !== '') continue; // `{ return x; }` on one line
      }
      const real = text.slice(selEnd, fn.endIndex);
      const lines = real.trim().split('\n').length;
      if (lines > MAX_BODY_LINES || real.length > MAX_BODY_CHARS) continue;
      out.push({ set, path: file, language, doc: text.slice(0, selEnd) + text.slice(fn.endIndex), selStart, selEnd, body: real });
    }
  } finally {
    tree.delete();
  }
  return out;
}

/** Held-out functions of the eval sets' files, in a fixed order, at most `perFile` per file. */
export async function heldOutFunctions(files: string[], perFile = 2): Promise<HeldOutFunction[]> {
  const out: HeldOutFunction[] = [];
  const parsers = new Map<string, Parser>();
  for (const file of files) {
    const set = path.basename(file, '.jsonl');
    const seen = new Set<string>();
    for (const s of readEvalSamples(file)) {
      if (seen.has(s.path)) continue;
      seen.add(s.path);
      if (!parsers.has(s.language)) parsers.set(s.language, await parserFor(s.language));
      out.push(...functionsOf(parsers.get(s.language)!, set, s.path, s.language, s.prefix + s.expected + s.suffix).slice(0, perFile));
    }
  }
  for (const p of parsers.values()) p.delete();
  return out;
}

export interface GenerateSampleResult {
  set: string;
  path: string;
  language: string;
  /** A result came out (not dropped, not empty). */
  result: boolean;
  parses: boolean;
  endsInside: boolean;
  /** A line or block repeated in the result (0 is the target) / in the raw model text. */
  loops: boolean;
  rawLoops: boolean;
  droppedBy: string | null;
  finishReason: string;
  similarity: number;
  firstLineMs: number | null;
  totalMs: number;
  tokens: number;
  text: string;
  body: string;
}

/** Whether the repetition rules would cut `text` (an independent look at the final result: they ran before the block cut). */
function loops(text: string, above: string): boolean {
  const ctx = { above, below: '', indent: '', syntax: null, keepParseErrors: false };
  return cutRepeatedBlock(text, ctx) !== text || repetitionGuard(text, { linePrefix: '', lineSuffix: '', lineAbove: '', nextLines: [], indent: '' }) !== text;
}

/** What generateForSelection needs to run the command's way on `engine`'s model, through `generator` (the engine, or a wrapper of it). */
export function generateInputsFor(engine: Engine, generator: Backend, syntax: SyntaxRefiner | null): SelectionInputs {
  return {
    generator,
    template: pickFimTemplate(engine.info.specialTokens),
    contextTokens: engine.info.contextLength,
    charsPerToken: engine.info.charsPerToken,
    budget: defaultCompletionSettings().budget,
    extraContextChars: 0,
    context: defaultCompletionSettings().context,
    preset: { ...GENERATE_PRESET, stop: [...GENERATE_PRESET.stop] },
    syntax,
  };
}

export async function generateReport(
  engine: Engine,
  dataFiles: string[],
  opts: { limit: number; outDir: string; log: (line: string) => void },
): Promise<Record<string, unknown>> {
  const functions = (await heldOutFunctions(dataFiles)).slice(0, opts.limit);
  const syntax = new SyntaxRefiner({ log: (line) => console.error(line) });
  for (const lang of ['python', 'javascript', 'typescript']) await syntax.ready(lang);
  const inputs = generateInputsFor(engine, engine, syntax);
  const parsers = new Map<string, Parser>();
  const results: GenerateSampleResult[] = [];
  for (const f of functions) {
    if (!parsers.has(f.language)) parsers.set(f.language, await parserFor(f.language));
    const parser = parsers.get(f.language)!;
    const doc = textSource(f.doc);
    const out = await generateForSelection(inputs, {
      doc,
      selection: { start: positionAt(f.doc, f.selStart), end: positionAt(f.doc, f.selEnd) },
      languageId: f.language,
      path: f.path,
    });
    const text = out.text ?? '';
    const insStart = f.selEnd; // the plan inserts at the end of the selection's last line, which is selEnd here
    const errorsOf = (t: string) => {
      const tree = parser.parse(t);
      try {
        return tree ? collectErrors(tree.rootNode).length : Infinity;
      } finally {
        tree?.delete();
      }
    };
    const withResult = f.doc.slice(0, insStart) + text + f.doc.slice(insStart);
    const parses = errorsOf(withResult) <= errorsOf(f.doc.slice(0, insStart) + f.body + f.doc.slice(insStart));
    const r: GenerateSampleResult = {
      set: f.set,
      path: f.path,
      language: f.language,
      result: out.text !== null,
      parses,
      endsInside: out.text !== null && endsInside(parser, withResult, insStart, text.length),
      loops: out.text !== null && loops(text, f.doc.slice(0, insStart)),
      rawLoops: loops(out.raw, f.doc.slice(0, insStart)),
      droppedBy: out.droppedBy,
      finishReason: out.finishReason,
      similarity: editSimilarity(text.trim(), f.body.trim()),
      firstLineMs: out.firstLineMs,
      totalMs: out.totalMs,
      tokens: out.stats.generatedTokens,
      text,
      body: f.body,
    };
    results.push(r);
  }
  for (const p of parsers.values()) p.delete();
  syntax.dispose();
  fs.writeFileSync(path.join(opts.outDir, 'generate-samples.jsonl'), `${results.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const byLanguage: Record<string, unknown> = {};
  for (const lang of ['all', ...new Set(results.map((r) => r.language))])
    byLanguage[lang] = summarize(results.filter((r) => lang === 'all' || r.language === lang));
  const report = { n: results.length, by_language: byLanguage, examples: results.slice(0, 6).map((r) => ({ path: r.path, got: r.text, body: r.body })) };
  opts.log(
    '\n| language | functions | result | of the results: parses | ends inside | loops (result / raw) | ran to the limit | edit similarity | first line, median / p90 ms |\n|---|---|---|---|---|---|---|---|---|',
  );
  for (const [lang, s] of Object.entries(byLanguage) as [string, Summary][])
    opts.log(
      `| ${lang} | ${s.n} | ${pct(s.result)} | ${pct(s.parses)} | ${pct(s.ends_inside)} | ${s.loops} / ${s.raw_loops} | ${s.ran_to_limit} | ${s.edit_similarity.toFixed(3)} | ${s.first_line_ms.median} / ${s.first_line_ms.p90} |`,
    );
  return report;
}

/** The innermost function holding the insertion ends inside the inserted text and swallows nothing after it. */
function endsInside(parser: Parser, text: string, insStart: number, length: number): boolean {
  const tree = parser.parse(text);
  if (!tree) return false;
  try {
    let fn: Node | null = tree.rootNode.descendantForIndex(Math.max(0, insStart - 1));
    while (fn && !FUNCTION_TYPES.has(fn.type)) fn = fn.parent;
    if (!fn || fn.hasError) return false;
    const insEnd = insStart + length;
    // After the function's end only blanks, comments and a separator (`};`: an empty statement, as the block
    // cut keeps it on the closing line) may remain of the result.
    return fn.endIndex > insStart && fn.endIndex <= insEnd && /^[;,]?(?:\s|#.*|\/\/.*)*$/.test(text.slice(fn.endIndex, insEnd));
  } finally {
    tree.delete();
  }
}

interface Summary {
  n: number;
  result: number;
  parses: number;
  ends_inside: number;
  /** Over every function, a dropped result included (the file then has no body there). */
  file_parses: number;
  loops: number;
  raw_loops: number;
  ran_to_limit: number;
  edit_similarity: number;
  first_line_ms: { median: number; p90: number };
  total_ms_median: number;
  dropped_by: Record<string, number>;
}

function summarize(rs: GenerateSampleResult[]): Summary {
  const share = (f: (r: GenerateSampleResult) => boolean, of = rs) => round(of.filter(f).length / Math.max(1, of.length), 4);
  const withResult = rs.filter((r) => r.result);
  const first = rs.flatMap((r) => (r.firstLineMs === null ? [] : [r.firstLineMs]));
  const dropped: Record<string, number> = {};
  for (const r of rs) if (r.droppedBy) dropped[r.droppedBy] = (dropped[r.droppedBy] ?? 0) + 1;
  return {
    n: rs.length,
    result: share((r) => r.result),
    parses: share((r) => r.parses, withResult),
    ends_inside: share((r) => r.endsInside, withResult),
    file_parses: share((r) => r.parses),
    loops: rs.filter((r) => r.loops).length,
    raw_loops: rs.filter((r) => r.rawLoops).length,
    ran_to_limit: rs.filter((r) => r.finishReason === 'length' || r.finishReason === 'time').length,
    edit_similarity: round(rs.reduce((s, r) => s + r.similarity, 0) / Math.max(1, rs.length), 3),
    first_line_ms: { median: round(median(first)), p90: round(percentile(first, 90)) },
    total_ms_median: round(median(rs.map((r) => r.totalMs))),
    dropped_by: dropped,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
