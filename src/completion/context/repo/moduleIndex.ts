import { LRUCache } from 'lru-cache';
import { type Declaration, declarationsOf } from './declarationsOf';
import { type ImportRef, importsOf } from './importsOf';
import type { SourceParser } from './parseSource';
import type { SourceFiles } from './sourceFiles';
import { languageOfPath, type SourceLanguage } from './sourceLanguage';

/** What the providers need of a file: its imports and its top-level declarations. */
export interface ModuleSummary {
  lang: SourceLanguage;
  imports: ImportRef[];
  declarations: Map<string, Declaration>;
}

/**
 * Parsed summaries of workspace files, cached by path and the file's stamp (mtime and size), so moving the
 * cursor or typing in one file re-reads none of the files it imports. Bounded (an LRU of 512 files).
 */
export class ModuleIndex {
  private readonly cache = new LRUCache<string, { stamp: string; summary: ModuleSummary | null }>({ max: 512 });

  constructor(
    readonly files: SourceFiles,
    readonly parser: SourceParser,
  ) {}

  /** The summary of a workspace file, or null when it cannot be read or parsed. */
  async summary(path: string): Promise<ModuleSummary | null> {
    const lang = languageOfPath(path);
    if (!lang) return null;
    const stamp = (await this.files.stamp(path)) ?? '';
    const hit = this.cache.get(path);
    if (hit && stamp !== '' && hit.stamp === stamp) return hit.summary;
    const text = await this.files.read(path);
    const summary = text === undefined ? null : await this.summarize(text, lang);
    this.cache.set(path, { stamp, summary });
    return summary;
  }

  /** The summary of text that is not (or not yet) on disk: the file being edited. */
  summarize(text: string, lang: SourceLanguage): Promise<ModuleSummary | null> {
    return this.parser.withTree(text, lang, (root) => ({ lang, imports: importsOf(root, lang), declarations: declarationsOf(root, lang) }));
  }
}
