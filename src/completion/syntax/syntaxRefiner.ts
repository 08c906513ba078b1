import type { Node, Parser, Tree } from '@vscode/tree-sitter-wasm';
import { blockCut } from './blockCut';
import { closingText, type OpenTail, openTail } from './bracketScan';
import { grammarWasm, loadLanguage, loadRuntime, runtimeWasm } from './grammarLoader';
import { type GrammarSpec, grammarFor } from './languages';
import { collectErrors, type Insertion, newErrors, type ParseError, unreadableAbove } from './parseErrors';
import { editBetween } from './textEdit';

export interface SyntaxWindow {
  languageId: string;
  /** Lines above the cursor line in the prompt window (each ends in '\n'); may start mid-block. */
  prefix: string;
  /** The cursor line up to the cursor. */
  linePrefix: string;
  /** The cursor line after the cursor. */
  lineSuffix: string;
  /** Lines below the cursor line (starts with '\n' when non-empty). */
  suffix: string;
  /**
   * The window starts inside a block it does not show the start of (checkWindow found no top-level line):
   * the parser reads a fragment (class members as stray code), so suggestions are not judged, only passed.
   */
  startsInBlock?: boolean;
  /**
   * The window ends before the file does: a multi-line string or comment that a suggestion opens may close
   * below it (a docstring's opening quotes typed above a long docstring), so it is closed for the parse.
   */
  cutBelow?: boolean;
}

export interface SyntaxRefinerOptions {
  log?: (line: string) => void;
  /** Folder holding the .wasm files (runtime and grammars); default: next to the bundle in dist/, else node_modules. */
  wasmDir?: string;
  /** Windows longer than this (with the suggestion) are not parsed. Default 20,000. */
  maxChars?: number;
  /** A parse that runs longer than this is abandoned (the suggestion then goes through unchanged). Default 50 ms. */
  parseTimeoutMs?: number;
  /** Parse every window from scratch, not incrementally from the previous one (bench: the cold cost). */
  noReuse?: boolean;
}

/** Why the last refine() returned what it did (tests, bench, the stats). */
export type RefineOutcome = 'unchanged' | 'cut' | 'dropped' | 'skipped';

interface GrammarState {
  spec: GrammarSpec;
  loaded: Promise<boolean>;
  parser: Parser | null;
}

interface Parsed {
  key: string;
  text: string;
  bodyLength: number;
  tree: Tree;
  errors: ParseError[];
  tail: OpenTail;
}

interface After {
  tree: Tree;
  /** openTail().damage of the text after insertion. */
  damage: number;
  text: string;
  bodyLength: number;
}

const DEFAULT_MAX_CHARS = 20_000;
const DEFAULT_PARSE_TIMEOUT_MS = 50;

/**
 * Syntax-aware post-processing with tree-sitter: cuts a suggestion at the end of the block the cursor is
 * in, and drops one whose insertion adds parse errors the window did not have. Grammars load lazily per
 * language; until one is loaded, and whenever anything goes wrong, suggestions pass through unchanged
 * (the indentation filters stay the fallback) with one log line per language and problem.
 */
export class SyntaxRefiner {
  private readonly grammars = new Map<string, GrammarState>();
  private readonly logged = new Set<string>();
  private readonly maxChars: number;
  private readonly parseTimeoutMs: number;
  /** The window before insertion, parsed: the same for every suggestion at one cursor position. */
  private before: Parsed | null = null;
  /** What the last refine() did. */
  lastOutcome: RefineOutcome = 'skipped';

  constructor(private readonly opts: SyntaxRefinerOptions = {}) {
    this.maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
    this.parseTimeoutMs = opts.parseTimeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
  }

  /** Starts loading the grammar for a language in the background (idempotent, cheap). */
  prepare(languageId: string): void {
    this.grammar(languageId);
  }

  /** Resolves when the grammar is loaded (true) or has failed or does not exist (false). */
  ready(languageId: string): Promise<boolean> {
    return this.grammar(languageId)?.loaded ?? Promise.resolve(false);
  }

  /** Whether refine() parses this language now. */
  isReady(languageId: string): boolean {
    return !!this.grammars.get(languageId)?.parser;
  }

  /**
   * Synchronous. `text` is a post-processed suggestion to insert at the cursor. Returns it, cut at the end of
   * the syntactic block the cursor is in, or null when inserting it adds parse errors the window did not have.
   * When no grammar is loaded (yet, or ever), the window is too large or starts inside a block, or anything throws:
   * returns `text` unchanged and logs one line per language/problem, never throws.
   */
  refine(text: string, w: SyntaxWindow): string | null {
    this.lastOutcome = 'skipped';
    try {
      const g = this.grammar(w.languageId);
      if (!g?.parser || text.trim() === '' || w.startsInBlock || this.tooLarge(text, w)) return text;
      const refined = this.refineWith(g, text, w);
      this.lastOutcome = refined.outcome;
      return refined.text;
    } catch (err) {
      this.logOnce(`${w.languageId}:error`, `syntax: ${w.languageId}: ${err instanceof Error ? err.message : String(err)}; suggestions pass unchecked`);
      this.lastOutcome = 'skipped';
      return text;
    }
  }

  /** Parse errors of a window as refine() sees it (closers appended), or null when it is not parsed (tests, diagnostics). */
  windowErrors(w: SyntaxWindow): number | null {
    try {
      const g = this.grammar(w.languageId);
      if (!g?.parser) return null;
      return this.parsedBefore(g.parser, g.spec, w.languageId, w.prefix + w.linePrefix + w.lineSuffix + w.suffix)?.errors.length ?? null;
    } catch {
      return null;
    }
  }

  /** Frees the parsers and the cached tree. */
  dispose(): void {
    this.dropBefore();
    for (const g of this.grammars.values()) {
      g.parser?.delete();
      g.parser = null;
    }
  }

  private refineWith(g: GrammarState, text: string, w: SyntaxWindow): { text: string | null; outcome: RefineOutcome } {
    const parser = g.parser!;
    const head = w.prefix + w.linePrefix;
    const rest = w.lineSuffix + w.suffix;
    const passed = { text, outcome: 'skipped' as RefineOutcome };
    const before = this.parsedBefore(parser, g.spec, w.languageId, head + rest);
    if (!before || unreadableAbove(before, head.length)) return passed;

    const ins = { start: head.length, length: text.length };
    const parseAfter = (t: string): After | null => this.parseAfter(parser, g.spec, w, before, t);
    const judged = (kept: string, after: After, at: Insertion) =>
      this.addsNoErrors(before, after, at) ? { text: kept, outcome: (kept === text ? 'unchanged' : 'cut') as RefineOutcome } : null;

    const first = parseAfter(text);
    if (!first) return passed;
    let cut: ReturnType<typeof blockCut>;
    try {
      cut = blockCut(first.tree.rootNode, text, ins.start, g.spec.blocks);
      if (cut === null) return judged(text, first, ins) ?? { text: null, outcome: 'dropped' };
    } finally {
      first.tree.delete();
    }
    // Cut: the kept part is checked on its own; when it fails because the document closes the block
    // itself (the suggestion repeats the closing `}`), the cut before that line is tried.
    for (const keep of cut.open === null ? [cut.keep] : [cut.keep, cut.open]) {
      const kept = text.slice(0, keep).trimEnd();
      if (kept.trim() === '') break;
      const after = parseAfter(kept);
      if (!after) return passed;
      try {
        const out = judged(kept, after, { start: ins.start, length: kept.length });
        if (out) return out;
      } finally {
        after.tree.delete();
      }
    }
    return { text: null, outcome: 'dropped' };
  }

  /** The window with `t` inserted at the cursor, its open brackets closed as before insertion; null when the parse timed out. */
  private parseAfter(parser: Parser, spec: GrammarSpec, w: SyntaxWindow, before: Parsed, t: string, timeoutMs = this.parseTimeoutMs): After | null {
    const head = w.prefix + w.linePrefix;
    const body = head + t + w.lineSuffix + w.suffix;
    const tail = openTail(body, spec.lexical);
    const text = body + closingText(tail, before.tail.inside !== null || w.cutBelow === true);
    const tree = this.parse(parser, w.languageId, text, before, timeoutMs);
    return tree ? { tree, damage: tail.damage, text, bodyLength: body.length } : null;
  }

  /**
   * For Generate from Selection's rules (src/completion/selection/): calls `use` with the tree of the window
   * with `text` inserted at the cursor (brackets the window leaves open closed virtually, as refine() does)
   * and the grammar's block node types. Null when nothing is parsed (no grammar yet, too large, a timeout,
   * an error); never throws. The tree is freed after `use` returns.
   */
  inspect<T>(text: string, w: SyntaxWindow, use: (root: Node, insStart: number, blocks: ReadonlySet<string>) => T, timeoutMs = this.parseTimeoutMs): T | null {
    return this.withInserted(text, w, timeoutMs, (g, _before, after) => use(after.tree.rootNode, w.prefix.length + w.linePrefix.length, g.spec.blocks));
  }

  /**
   * Whether inserting `text` at the cursor adds parse errors the window did not have, by the rule refine()
   * drops suggestions by; null when nothing is parsed (or the window starts inside a block). Never throws.
   */
  addsErrors(text: string, w: SyntaxWindow, timeoutMs = this.parseTimeoutMs): boolean | null {
    if (w.startsInBlock) return null;
    return this.withInserted(text, w, timeoutMs, (_g, before, after) => {
      if (unreadableAbove(before, w.prefix.length + w.linePrefix.length)) return null;
      return !this.addsNoErrors(before, after, { start: w.prefix.length + w.linePrefix.length, length: text.length });
    });
  }

  /** Calls `use` with the window parsed before and after inserting `text`; null when nothing is parsed. Never throws; frees the tree. */
  private withInserted<T>(text: string, w: SyntaxWindow, timeoutMs: number, use: (g: GrammarState, before: Parsed, after: After) => T): T | null {
    const ready = this.readyWindow(text, w, timeoutMs);
    if (!ready) return null;
    try {
      const after = this.parseAfter(ready.g.parser!, ready.g.spec, w, ready.before, text, timeoutMs);
      if (!after) return null;
      try {
        return use(ready.g, ready.before, after);
      } finally {
        after.tree.delete();
      }
    } catch (err) {
      this.logOnce(`${w.languageId}:error`, `syntax: ${w.languageId}: ${err instanceof Error ? err.message : String(err)}; results pass unchecked`);
      return null;
    }
  }

  /** A window with `text` inserted over maxChars is not parsed (logged once per language). */
  private tooLarge(text: string, w: SyntaxWindow): boolean {
    const size = w.prefix.length + w.linePrefix.length + w.lineSuffix.length + w.suffix.length + text.length;
    if (size <= this.maxChars) return false;
    this.logOnce(`${w.languageId}:size`, `syntax: ${w.languageId} window of ${size} characters is over ${this.maxChars}: not parsed`);
    return true;
  }

  /** The grammar and the parsed window before insertion, when `text` in `w` can be parsed now. */
  private readyWindow(text: string, w: SyntaxWindow, timeoutMs: number): { g: GrammarState; before: Parsed } | null {
    const g = this.grammars.get(w.languageId) ?? this.grammar(w.languageId);
    if (!g?.parser || this.tooLarge(text, w)) return null;
    const before = this.parsedBefore(g.parser, g.spec, w.languageId, w.prefix + w.linePrefix + w.lineSuffix + w.suffix, timeoutMs);
    return before ? { g, before } : null;
  }

  /**
   * Whether the insertion adds no parse error. Besides the errors that newErrors() finds, a suggestion whose
   * text has more stray closers or unterminated strings than the window had fails when the parser reports any
   * error at the insertion: there, an unfinished cursor line's error would otherwise explain it.
   */
  private addsNoErrors(before: Parsed, after: After, ins: Insertion): boolean {
    const errors = collectErrors(after.tree.rootNode);
    const insEnd = ins.start + ins.length;
    const damaged = after.damage > before.tail.damage && errors.some((e) => e.end >= ins.start && e.start <= insEnd);
    return !damaged && newErrors(before, { errors, text: after.text, bodyLength: after.bodyLength }, ins).length === 0;
  }

  private parsedBefore(parser: Parser, spec: GrammarSpec, languageId: string, body: string, timeoutMs = this.parseTimeoutMs): Parsed | null {
    const key = `${languageId}\u0000${body}`;
    if (this.before?.key === key) return this.before;
    const tail = openTail(body, spec.lexical);
    const text = body + closingText(tail, true);
    // The window of the previous call, when it was the same language, is the old tree of an incremental parse:
    // while typing, the window changes by a keystroke or a moved start.
    const previous = !this.opts.noReuse && this.before?.key.startsWith(`${languageId}\u0000`) ? this.before : undefined;
    const tree = this.parse(parser, languageId, text, previous, timeoutMs);
    this.dropBefore();
    if (!tree) return null;
    this.before = { key, text, bodyLength: body.length, tree, errors: collectErrors(tree.rootNode), tail };
    return this.before;
  }

  /** Parses `text`, incrementally from `old` (a tree and its text) when given; null when the parse timed out. */
  private parse(parser: Parser, languageId: string, text: string, old?: { tree: Tree; text: string }, timeoutMs = this.parseTimeoutMs): Tree | null {
    let oldTree: Tree | null = null;
    const edit = old ? editBetween(old.text, text) : null;
    if (old && edit) {
      oldTree = old.tree.copy();
      oldTree.edit(edit);
    }
    const deadline = performance.now() + timeoutMs;
    try {
      const tree = parser.parse(text, oldTree, { progressCallback: () => performance.now() > deadline });
      if (!tree) {
        parser.reset();
        this.logOnce(`${languageId}:timeout`, `syntax: ${languageId} parse of ${text.length} characters took over ${timeoutMs} ms: abandoned`);
      }
      return tree;
    } finally {
      oldTree?.delete();
    }
  }

  private dropBefore(): void {
    this.before?.tree.delete();
    this.before = null;
  }

  private grammar(languageId: string): GrammarState | undefined {
    const known = this.grammars.get(languageId);
    if (known) return known;
    const spec = grammarFor(languageId);
    if (!spec) {
      this.logOnce(`${languageId}:unknown`, `syntax: no grammar for ${languageId}: indentation heuristics only`);
      return undefined;
    }
    const state: GrammarState = { spec, parser: null, loaded: Promise.resolve(false) };
    state.loaded = this.load(state, languageId);
    this.grammars.set(languageId, state);
    return state;
  }

  private async load(state: GrammarState, languageId: string): Promise<boolean> {
    const file = grammarWasm(state.spec.grammar, this.opts.wasmDir);
    try {
      const ts = await loadRuntime(runtimeWasm(this.opts.wasmDir));
      const language = await loadLanguage(ts, file);
      const parser = new ts.Parser();
      parser.setLanguage(language);
      state.parser = parser;
      return true;
    } catch (err) {
      this.logOnce(
        `${languageId}:load`,
        `syntax: cannot load the ${languageId} grammar (${file}): ${err instanceof Error ? err.message : String(err)}; indentation heuristics only`,
      );
      return false;
    }
  }

  private logOnce(key: string, line: string): void {
    if (this.logged.has(key)) return;
    this.logged.add(key);
    try {
      this.opts.log?.(line);
    } catch {
      // a logger that throws must not break the suggestion path
    }
  }
}
