// A stand-in for the editor's language-server definitions source (src/vscode/definitionsProvider.ts) where no
// editor runs (the context-stability walk): the same symbols, key and keep policy; each symbol's definition is
// looked up among the names the file imports or among the members of the classes of the line's receivers
// (receiverTypes.ts: `store.get` gives the method `get` of the class of `store`), and a receiver's type definition
// is its class, where a language server would be asked. The texts are the declarations themselves, as the
// editor's source gives them (not the imports source's view with the members the file uses). A language server
// also finds members and the types of untyped variables, so this finds fewer definitions than the editor: it
// shows how the source's bytes change as the cursor moves, not what a language server finds.
import { DEFINITIONS_KEEP_EARLIER, definitionsKey, symbolsNear } from '../../src/completion/context/repo/definitionsSource';
import { findImported } from '../../src/completion/context/repo/findDeclaration';
import { importSection } from '../../src/completion/context/repo/importContext';
import { ModuleIndex } from '../../src/completion/context/repo/moduleIndex';
import { MAX_PARSED_CHARS, SourceParser } from '../../src/completion/context/repo/parseSource';
import { receiverClassesAt } from '../../src/completion/context/repo/receiverTypes';
import { BENCH_PARSE_TIMEOUT_MS } from './crossfileSet';
import type { ContextProvider } from '../../src/completion/context/repo/repoContext';
import type { ContextSnippet } from '../../src/completion/context/repo/snippet';
import type { SourceFiles } from '../../src/completion/context/repo/sourceFiles';
import { languageOfPath } from '../../src/completion/context/repo/sourceLanguage';

/** `keep`: the product's policy (earlier lines' definitions stay); false replaces them at each key (before 2026-12-07). */
export function simulatedDefinitionsProvider(files: SourceFiles, keep: boolean): ContextProvider {
  const index = new ModuleIndex(files, new SourceParser(undefined, BENCH_PARSE_TIMEOUT_MS));
  return {
    source: 'definitions',
    key: definitionsKey,
    ...(keep ? { keepEarlier: DEFINITIONS_KEEP_EARLIER } : {}),
    gather: async (at, signal) => {
      const lang = languageOfPath(at.path);
      const symbols = symbolsNear(at);
      if (!lang || at.length > MAX_PARSED_CHARS || symbols.length === 0) return [];
      const text = at.text();
      const summary = await index.summarize(importSection(text), lang);
      if (!summary) return [];
      const out: ContextSnippet[] = [];
      const add = (path: string, d: { name: string; line: number; text: string }, score: number) => {
        if (path !== at.path && !out.some((s) => s.path === path && s.line === d.line))
          out.push({ source: 'definitions', path, text: d.text, line: d.line, names: [d.name], score });
      };
      for (const [rank, s] of symbols.entries()) {
        for (const ref of summary.imports) {
          const name = ref.names.find((n) => n.local === s.name && n.imported !== '*');
          const found = name ? await findImported(index, at.path, ref, name.imported, lang) : null;
          if (found) add(found.path, found.declaration, 1 - rank * 0.1);
        }
      }
      const classes = await receiverClassesAt({ path: at.path, text, lang, line: at.line }, summary, index, signal);
      for (const [rank, s] of symbols.entries())
        for (const c of classes) {
          const member = memberOf(c.declaration, s.name);
          if (member) add(c.path, member, 1 - rank * 0.1);
        }
      for (const found of classes) add(found.path, found.declaration, 0.9);
      return out;
    },
  };
}

/** A member's declaration in a class's text: its line and what follows up to a blank line or the next member, at most 10 lines. */
function memberOf(cls: { line: number; text: string }, name: string): { name: string; line: number; text: string } | null {
  const lines = cls.text.split('\n');
  const head = new RegExp(`^(\\s+)(?:(?:async|static|public|private|protected|readonly|get|set|def)\\s+)*${name}\\s*[(:=<?]`);
  const at = lines.findIndex((l) => head.test(l));
  if (at < 0) return null;
  const indent = head.exec(lines[at])?.[1].length ?? 0;
  const body = [lines[at]];
  for (let i = at + 1; i < lines.length && body.length < 10; i++) {
    const l = lines[i];
    if (l.trim() === '' || l.length - l.trimStart().length <= indent) break;
    body.push(l);
  }
  return { name, line: cls.line + at, text: body.join('\n') };
}
