import type { Language, Node, Parser } from '@vscode/tree-sitter-wasm';
import { grammarWasm, loadLanguage, loadRuntime, runtimeWasm } from '../../syntax/grammarLoader';
import type { SourceLanguage } from './sourceLanguage';

/** Files longer than this are not parsed for context (generated bundles, data): their declarations are skipped. */
export const MAX_PARSED_CHARS = 512 * 1024;
const PARSE_TIMEOUT_MS = 100;

/**
 * Parses whole source files for the context providers (imports, declarations) with tree-sitter. One parser per
 * language, loaded lazily; a parse that runs past its deadline, a file over MAX_PARSED_CHARS or a grammar that
 * fails to load gives null, and the caller goes on without that file.
 */
export class SourceParser {
  private readonly parsers = new Map<SourceLanguage, Promise<Parser | null>>();

  /** `timeoutMs`: how long one parse may run (the editor's thread waits on it); tests of correctness on huge inputs raise it. */
  constructor(
    private readonly wasmDir?: string,
    private readonly timeoutMs: number = PARSE_TIMEOUT_MS,
  ) {}

  /** Runs `use` on the root of `text`'s tree (freed after), or returns null when it cannot be parsed. */
  async withTree<T>(text: string, lang: SourceLanguage, use: (root: Node) => T): Promise<T | null> {
    if (text.length > MAX_PARSED_CHARS) return null;
    const parser = await this.parser(lang);
    if (!parser) return null;
    const deadline = performance.now() + this.timeoutMs;
    let tree: ReturnType<Parser['parse']> = null;
    try {
      tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
    } catch {
      parser.reset();
      return null;
    }
    if (!tree) {
      parser.reset();
      return null;
    }
    try {
      return use(tree.rootNode);
    } finally {
      tree.delete();
    }
  }

  private parser(lang: SourceLanguage): Promise<Parser | null> {
    let p = this.parsers.get(lang);
    if (!p) {
      p = (async () => {
        const ts = await loadRuntime(runtimeWasm(this.wasmDir));
        const language: Language = await loadLanguage(ts, grammarWasm(lang, this.wasmDir));
        const parser = new ts.Parser();
        parser.setLanguage(language);
        return parser;
      })().catch(() => null);
      this.parsers.set(lang, p);
    }
    return p;
  }
}
