import * as fs from 'node:fs';
import * as path from 'node:path';
import { cursorAfter, HistoryFileError, historyEdits, replayHistory } from '../completion/nextEdit/historyFile';
import { nextEditModelProblem } from '../completion/nextEdit/nextEditModel';
import { nextEditPrompt, predictNextEdit } from '../completion/nextEdit/predictNextEdit';
import { EngineClient } from '../engine/host/client';
import type { DeviceSetting } from '../engine/shared/device';
import { checkKnown, num, one, type ParsedArgs } from './args';

/** Bad input to `ghostline next-edit`: one message, exit code 2. */
class NextEditInputError extends Error {}

const VALUES = ['model', 'file', 'history', 'workspace', 'offset', 'threads', 'device'];

/**
 * `ghostline next-edit --model DIR --file PATH --history HISTORY.json [--offset N] [--workspace DIR] [--json]
 * [--prompt-only]`: the next edit Ghostline would propose after the history, as the editor computes it.
 */
export async function nextEditCommand(args: ParsedArgs, device: () => DeviceSetting, verdictFile: string): Promise<number> {
  checkKnown(args, 'next-edit', VALUES, ['json', 'prompt-only']);
  try {
    return await run(args, device, verdictFile);
  } catch (err) {
    if (!(err instanceof NextEditInputError)) throw err;
    process.stderr.write(`ghostline: ${err.message}\n`);
    return 2;
  }
}

async function run(args: ParsedArgs, device: () => DeviceSetting, verdictFile: string): Promise<number> {
  const input = readInput(args);
  if (args.flags.has('prompt-only')) {
    const built = nextEditPrompt(input);
    if ('reason' in built)
      throw new NextEditInputError(
        `no prompt: ${built.reason === 'noWindow' ? 'the cursor is on a line too long for a window' : 'the file or a path holds a reserved token (<|file_sep|>, <|endoftext|>, </s>)'}`,
      );
    process.stdout.write(args.flags.has('json') ? `${JSON.stringify({ prompt: built.prompt, window: built.window })}\n` : built.prompt);
    return 0;
  }
  const model = one(args, 'model');
  if (!model) throw new NextEditInputError('next-edit needs --model DIR (a next-edit model, such as Sweep next-edit 0.5B converted by Ghostline)');
  const client = new EngineClient();
  try {
    const info = await client.load(model, { threads: num(args, 'threads'), device: device(), deviceVerdictFile: verdictFile });
    const problem = nextEditModelProblem(info);
    if (problem) throw new NextEditInputError(problem);
    const outcome = await predictNextEdit(client, input);
    if (args.flags.has('json')) {
      const { prompt: _prompt, ...rest } = outcome;
      process.stdout.write(`${JSON.stringify(rest)}\n`);
    } else if (outcome.kind === 'edits') {
      for (const e of outcome.edits) {
        process.stdout.write(`${e.startLine}:${e.startCharacter}-${e.endLine}:${e.endCharacter} ${JSON.stringify(e.newText)}\n`);
      }
    } else process.stderr.write(`ghostline: no next edit (${outcome.reason}${outcome.detail ? `: ${outcome.detail}` : ''})\n`);
    return 0;
  } finally {
    await client.dispose();
  }
}

function readInput(args: ParsedArgs) {
  const file = one(args, 'file');
  const historyFile = one(args, 'history');
  if (!file || !historyFile) throw new NextEditInputError('next-edit needs --file PATH and --history HISTORY.json');
  const workspace = path.resolve(one(args, 'workspace') ?? process.cwd());
  const abs = path.resolve(file);
  const rel = path.relative(workspace, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new NextEditInputError(`${file} is outside the workspace ${workspace} (--workspace)`);
  const documentText = readText(abs);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(historyFile, 'utf8'));
  } catch (err) {
    throw new NextEditInputError(`${historyFile}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const promptPath = rel.split(path.sep).join('/');
  try {
    const edits = historyEdits(parsed);
    const history = replayHistory(promptPath, documentText, edits);
    const offset = num(args, 'offset') ?? cursorAfter(edits);
    if (!Number.isInteger(offset) || offset < 0 || offset > documentText.length)
      throw new NextEditInputError(`--offset must be between 0 and ${documentText.length}`);
    return { path: promptPath, documentText, cursorOffset: offset, history };
  } catch (err) {
    if (err instanceof HistoryFileError) throw new NextEditInputError(`${historyFile}: ${err.message}`);
    throw err;
  }
}

function readText(file: string): string {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (err) {
    throw new NextEditInputError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (buf.subarray(0, 8000).includes(0)) throw new NextEditInputError(`${file} is a binary file`);
  return buf.toString('utf8');
}
