import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ContextSource } from '../completion/context/repo/snippet';
import { defaultModelDir } from '../engine/host/defaultModel';
import { WorkspaceFiles } from '../platform/workspaceFiles';
import { checkKnown, one, type ParsedArgs } from './args';
import { promptModel, WorkspacePrompts } from './workspacePrompt';

/** Bad input to `ghostline prompt`: one message, exit code 2. */
class PromptInputError extends Error {}

const LANGUAGE_IDS: Record<string, string> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'typescriptreact',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascriptreact',
  '.py': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.c': 'c',
  '.h': 'c',
  '.cpp': 'cpp',
  '.cc': 'cpp',
  '.hpp': 'cpp',
};

/** VS Code's language id for a file name (its extension without the dot when Ghostline knows no better). */
function languageIdOf(file: string): string {
  const ext = path.extname(file).toLowerCase();
  return LANGUAGE_IDS[ext] ?? (ext.slice(1) || 'plaintext');
}

const SOURCES: Record<string, ContextSource> = { imports: 'imports', similar: 'similar', recent: 'ring' };

function position(args: ParsedArgs, name: string): number {
  const v = one(args, name);
  if (v === undefined) throw new PromptInputError(`prompt needs --${name} (counted from 0)`);
  if (!/^\d+$/.test(v.trim())) throw new PromptInputError(`--${name} must be a whole number from 0, got "${v}"`);
  return Number(v);
}

/**
 * `ghostline prompt --workspace DIR --file PATH --line L --character C [--model DIR] [--sources LIST] [--json]`:
 * the prompt Ghostline would send for that position, with the repository context the editor-free sources find.
 */
export async function promptCommand(args: ParsedArgs): Promise<number> {
  checkKnown(args, 'prompt', ['workspace', 'file', 'line', 'character', 'model', 'sources'], ['json']);
  try {
    return await run(args);
  } catch (err) {
    if (!(err instanceof PromptInputError)) throw err;
    process.stderr.write(`ghostline: ${err.message}\n`);
    return 2;
  }
}

async function run(args: ParsedArgs): Promise<number> {
  const workspaceArg = one(args, 'workspace');
  const fileArg = one(args, 'file');
  if (!workspaceArg) throw new PromptInputError('prompt needs --workspace DIR');
  if (!fileArg) throw new PromptInputError('prompt needs --file PATH (inside the workspace)');
  const workspace = path.resolve(workspaceArg);
  if (!fs.existsSync(workspace) || !fs.statSync(workspace).isDirectory()) throw new PromptInputError(`--workspace ${workspaceArg} is not a folder`);
  const abs = path.resolve(workspace, fileArg);
  const rel = path.relative(fs.realpathSync(workspace), fs.existsSync(abs) ? fs.realpathSync(abs) : abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw new PromptInputError(`--file ${fileArg} is outside the workspace ${workspaceArg}`);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) throw new PromptInputError(`--file ${fileArg} does not exist (or is not a file)`);
  const bytes = fs.readFileSync(abs);
  if (bytes.subarray(0, 8192).includes(0)) throw new PromptInputError(`--file ${fileArg} is a binary file`);
  const text = bytes.toString('utf8');
  const line = position(args, 'line');
  const character = position(args, 'character');
  const lines = text.split('\n');
  if (line >= lines.length) throw new PromptInputError(`--line ${line} is past the end of ${fileArg} (${lines.length} lines, counted from 0)`);
  const lineLength = lines[line].replace(/\r$/, '').length;
  if (character > lineLength) throw new PromptInputError(`--character ${character} is past the end of line ${line} (${lineLength} characters)`);

  const sourcesArg = one(args, 'sources');
  let sources: Partial<Record<ContextSource, boolean>> = {};
  if (sourcesArg !== undefined) {
    const picked = sourcesArg
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = picked.filter((s) => !(s in SOURCES) && s !== 'none');
    if (unknown.length > 0) throw new PromptInputError(`--sources takes imports, similar, recent or none; got ${unknown.join(', ')}`);
    sources = { imports: picked.includes('imports'), similar: picked.includes('similar'), ring: picked.includes('recent') };
  }
  const model = await promptModel(one(args, 'model') ?? defaultModelDir());
  const prompts = new WorkspacePrompts(new WorkspaceFiles(workspace), model, { sources, repoName: path.basename(workspace) });
  const rel2 = rel.split(path.sep).join('/');
  const result = await prompts.at(rel2, text, line, character, languageIdOf(rel2));
  if (args.flags.has('json')) process.stdout.write(`${JSON.stringify({ prompt: result.text, context: result.context })}\n`);
  else process.stdout.write(`${result.text}\n`);
  return 0;
}
