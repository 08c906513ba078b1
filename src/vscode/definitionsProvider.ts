import * as vscode from 'vscode';
import { declarationAt } from '../completion/context/repo/declarationsOf';
import type { SourceParser } from '../completion/context/repo/parseSource';
import type { ContextProvider, GatherAt } from '../completion/context/repo/repoContext';
import type { ContextSnippet } from '../completion/context/repo/snippet';
import type { SourceFiles } from '../completion/context/repo/sourceFiles';
import { DEFINITIONS_KEEP_EARLIER, definitionsKey, symbolsNear } from '../completion/context/repo/definitionsSource';
import { languageOfPath } from '../completion/context/repo/sourceLanguage';

/** A definition in a language Ghostline cannot parse: this many lines from it, up to a blank line. */
const FALLBACK_LINES = 10;

/**
 * Definitions of the symbols at the cursor, through the editor's language features (any language with a
 * language server): the identifiers of the cursor line and the line above, nearest the cursor first; for each,
 * its definition and its type's definition (`r.` -> the class of `r`). Definitions in other workspace files
 * are kept as their declaration (tree-sitter for TypeScript, JavaScript and Python; otherwise the lines from
 * the definition to the first blank line). Requests still running at the deadline are given up on. What the
 * file's earlier lines found stays (definitionsSource.ts: the symbols, the key and that policy, without `vscode`).
 */
export function definitionsProvider(folder: vscode.WorkspaceFolder, files: SourceFiles, parser: SourceParser): ContextProvider {
  return {
    source: 'definitions',
    retryWhenEmpty: true,
    key: definitionsKey,
    keepEarlier: DEFINITIONS_KEEP_EARLIER,
    gather: (at, signal) => gather(folder, files, parser, at, signal),
  };
}

type Target = { uri: vscode.Uri; line: number };

function targetsOf(result: unknown): Target[] {
  const list = Array.isArray(result) ? result : result ? [result] : [];
  const out: Target[] = [];
  for (const r of list as (vscode.Location | vscode.LocationLink)[]) {
    if ('targetUri' in r) out.push({ uri: r.targetUri, line: (r.targetSelectionRange ?? r.targetRange).start.line });
    else if (r && 'uri' in r) out.push({ uri: r.uri, line: r.range.start.line });
  }
  return out;
}

function untilAborted<T>(p: Thenable<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const done = () => resolve(undefined);
    signal.addEventListener('abort', done, { once: true });
    Promise.resolve(p).then(
      (v) => {
        signal.removeEventListener('abort', done);
        resolve(v);
      },
      () => {
        signal.removeEventListener('abort', done);
        resolve(undefined);
      },
    );
  });
}

async function gather(folder: vscode.WorkspaceFolder, files: SourceFiles, parser: SourceParser, at: GatherAt, signal: AbortSignal): Promise<ContextSnippet[]> {
  const doc = vscode.workspace.textDocuments.find(
    (d) => vscode.workspace.getWorkspaceFolder(d.uri)?.uri.toString() === folder.uri.toString() && relativeTo(folder, d.uri) === at.path,
  );
  if (!doc) return [];
  const symbols = symbolsNear(at);
  const asks = symbols.flatMap((s, rank) =>
    ['vscode.executeDefinitionProvider', 'vscode.executeTypeDefinitionProvider'].map(async (command) => ({
      rank,
      name: s.name,
      targets: targetsOf(await untilAborted(vscode.commands.executeCommand(command, doc.uri, new vscode.Position(s.line, s.character)), signal)),
    })),
  );
  const out: ContextSnippet[] = [];
  const seen = new Set<string>();
  for (const { rank, name, targets } of await Promise.all(asks)) {
    for (const t of targets) {
      if (t.uri.toString() === doc.uri.toString() || vscode.workspace.getWorkspaceFolder(t.uri)?.uri.toString() !== folder.uri.toString()) continue;
      const path = relativeTo(folder, t.uri);
      const key = `${path}:${t.line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
      const text = open ? open.getText() : await files.read(path);
      if (text === undefined) continue;
      const snippet = await declarationSnippet(parser, path, text, t.line, name);
      if (snippet) out.push({ ...snippet, score: 1 - rank * 0.1 });
    }
  }
  return out;
}

async function declarationSnippet(parser: SourceParser, path: string, text: string, line: number, name: string): Promise<Omit<ContextSnippet, 'score'> | null> {
  const lang = languageOfPath(path);
  const parsed = lang ? await parser.withTree(text, lang, (root) => declarationAt(root, lang, line)) : null;
  if (parsed) return { source: 'definitions', path, text: parsed.text, line: parsed.line, names: [parsed.name] };
  const lines = text.split('\n');
  const picked: string[] = [];
  for (let i = line; i < lines.length && picked.length < FALLBACK_LINES; i++) {
    if (i > line && lines[i].trim() === '') break;
    picked.push(lines[i]);
  }
  return picked.length > 0 ? { source: 'definitions', path, text: picked.join('\n'), line, names: [name] } : null;
}

/** A workspace-relative path with `/`, as the pipeline names files. */
export function relativeTo(folder: vscode.WorkspaceFolder, uri: vscode.Uri): string {
  const base = folder.uri.path.endsWith('/') ? folder.uri.path : `${folder.uri.path}/`;
  return uri.path.startsWith(base) ? uri.path.slice(base.length) : vscode.workspace.asRelativePath(uri, false).replace(/\\/g, '/');
}
