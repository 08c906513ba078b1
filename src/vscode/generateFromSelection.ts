import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CompletionService } from '../completion/completionService';
import { generateForSelection, type SelectionOutcome } from '../completion/selection/generateForSelection';
import { type GenerateIntent, planGeneration } from '../completion/selection/plan';
import type { Generator } from '../completion/generator';
import { toEol, withInsertion } from '../completion/lineEndings';
import type { Config } from './config';
import { documentSource } from './documentSource';
import { REVIEW_SCHEME, type ReviewDocuments } from './reviewDocuments';
import type { StatusBar } from './statusBar';

export interface GenerateArgs {
  /** Insert without asking (integration tests, keybindings that want it). */
  autoAccept?: boolean;
  /** Keep a result that adds parse errors or leaves its block open (what "Insert anyway" does). */
  keepParseErrors?: boolean;
  /** Sampling seed of the first try (tests); the preset's when absent. */
  seed?: number;
}

export interface GenerateDeps {
  /** The local engine or the team server (null: none is ready). */
  generator: () => Generator | null;
  /** The inline pipeline of the same backend: its FIM template, windows, extra-context ring and tree-sitter. */
  service: () => CompletionService | null;
  notReadyReason: () => string;
  config: Config;
  status: StatusBar;
  log: vscode.LogOutputChannel;
  review: ReviewDocuments;
}

const INTENT_WORDS: Record<GenerateIntent, string> = {
  body: 'writing the body',
  finish: 'finishing the block',
  continue: 'continuing the line',
};

/** How often the streamed text is pushed into the review, at most. */
const STREAM_EVERY_MS = 120;

/**
 * "Ghostline: Generate from Selection": what the selection asks for (src/completion/selection/plan.ts), the
 * model's FIM prompt with the code after the selection as the suffix, the rules that cut the result where
 * its block ends (src/completion/selection/rules/). The result streams into a diff of the file against the
 * file with it inserted, at the place it will go; it is inserted only on Insert. Regenerate draws another
 * seed. Returns the inserted text (or null), for tests.
 */
export async function generateFromSelection(deps: GenerateDeps, args: GenerateArgs = {}): Promise<string | null> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Ghostline: open a file and select some code first.');
    return null;
  }
  const generator = deps.generator();
  const service = deps.service();
  if (!generator || !service) {
    void vscode.window.showWarningMessage(`Ghostline: ${deps.notReadyReason()}.`);
    return null;
  }
  const doc = editor.document;
  const selection = { start: editor.selection.start, end: editor.selection.end };
  const original = doc.getText();
  const versionAtStart = doc.version;
  if (doc.getText(new vscode.Range(new vscode.Position(0, 0), selection.end)).trim() === '' && doc.lineAt(selection.end.line).text.trim() === '') {
    void vscode.window.showInformationMessage('Ghostline: there is no code here to continue.');
    return null;
  }
  const preset = deps.config.generate(doc);
  const inputs = service.selectionInputs(generator, preset);
  const name = path.basename(doc.uri.path) || 'untitled';
  const id = Date.now().toString(36);
  const left = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${name}`, query: `original-${id}` });
  const right = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${name}`, query: `generated-${id}` });
  deps.review.set(left, original);
  deps.review.set(right, original);

  let seed = args.seed ?? preset.seed;
  let keepParseErrors = args.keepParseErrors ?? false;
  try {
    for (;;) {
      const out = await runOnce(deps, editor, inputs, selection, { seed, keepParseErrors, original, right, left, name });
      if (!out) return null;
      const insertAt = doc.offsetAt(new vscode.Position(out.plan.insertAt.line, out.plan.insertAt.character));
      const unfinished = out.text === null && (out.droppedBy === 'dropParseErrors' || out.droppedBy === 'dropUnclosedBlock');
      const text = out.text ?? (unfinished ? (out.beforeDrop ?? '').trimEnd() : null);
      deps.review.set(right, text === null ? original : withInsertion(original, insertAt, text, eolOf(doc)));
      let choice: string | undefined;
      const line = out.plan.insertAt.line + 1;
      if (text === null || text.trim() === '') {
        choice = args.autoAccept
          ? undefined
          : await vscode.window.showInformationMessage('Ghostline: the model had nothing worth inserting here.', 'Regenerate', 'Discard');
      } else if (unfinished) {
        const why = out.droppedBy === 'dropUnclosedBlock' ? 'does not close its block' : 'does not parse here';
        choice = args.autoAccept
          ? undefined
          : await vscode.window.showWarningMessage(
              `Ghostline: the result ${why} (${out.finishReason === 'length' || out.finishReason === 'time' ? 'a limit cut it short' : 'as written'}).`,
              'Insert anyway',
              'Copy',
              'Regenerate',
              'Discard',
            );
      } else {
        const lines = text.replace(/^\n/, '').split('\n').length;
        choice = args.autoAccept
          ? 'Insert'
          : await vscode.window.showInformationMessage(
              `Ghostline: ${lines} line${lines === 1 ? '' : 's'} (${INTENT_WORDS[out.plan.intent]}). Insert at line ${line}?`,
              'Insert',
              'Copy',
              'Regenerate',
              'Discard',
            );
      }
      if (choice === 'Regenerate') {
        seed = (seed + 1) >>> 0;
        keepParseErrors = args.keepParseErrors ?? false;
        deps.log.info(`generate: regenerating with seed ${seed}`);
        continue;
      }
      if (choice === 'Copy' && text) await vscode.env.clipboard.writeText(text);
      if ((choice !== 'Insert' && choice !== 'Insert anyway') || !text) return null;
      if (doc.version !== versionAtStart) deps.log.warn('the document changed while generating; inserting at the original position');
      const edit = new vscode.WorkspaceEdit();
      edit.insert(doc.uri, doc.positionAt(insertAt), toEol(text, eolOf(doc))); // lineEndings.ts
      return (await vscode.workspace.applyEdit(edit)) ? text : null;
    }
  } finally {
    await closeReview(right);
    deps.review.forget(left);
    deps.review.forget(right);
  }
}

interface RunContext {
  seed: number;
  keepParseErrors: boolean;
  original: string;
  left: vscode.Uri;
  right: vscode.Uri;
  name: string;
}

/** One generation, streamed into the review; null when it failed or was cancelled (the user was told). */
async function runOnce(
  deps: GenerateDeps,
  editor: vscode.TextEditor,
  inputs: ReturnType<CompletionService['selectionInputs']>,
  selection: { start: vscode.Position; end: vscode.Position },
  run: RunContext,
): Promise<SelectionOutcome | null> {
  const doc = editor.document;
  const done = deps.status.begin();
  let out: SelectionOutcome | null = null;
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ghostline: generating', cancellable: true },
      async (progress, token) => {
        const ac = new AbortController();
        const sub = token.onCancellationRequested(() => ac.abort());
        let opened = false;
        let lastPush = 0;
        let insertAt = -1;
        try {
          out = await generateForSelection(inputs, {
            doc: documentSource(doc),
            selection,
            languageId: doc.languageId,
            path: vscode.workspace.asRelativePath(doc.uri, false),
            seed: run.seed,
            keepParseErrors: run.keepParseErrors,
            indentUnit: editor.options.insertSpaces === false ? '\t' : ' '.repeat(typeof editor.options.tabSize === 'number' ? editor.options.tabSize : 4),
            signal: ac.signal,
            onText: (soFar) => {
              progress.report({ message: `${soFar.split('\n').length} lines` });
              const now = Date.now();
              if (now - lastPush < STREAM_EVERY_MS) return;
              lastPush = now;
              if (insertAt < 0) insertAt = insertionOffset(doc, selection);
              deps.review.set(run.right, withInsertion(run.original, insertAt, soFar, eolOf(doc)));
              if (!opened) {
                opened = true;
                void openReview(run);
              }
            },
          });
          if (!opened) await openReview(run);
          const o = out as SelectionOutcome;
          deps.log.info(
            `generate (${o.plan.intent}, seed ${run.seed}): ${o.stats.generatedTokens} tokens in ${Math.round(o.totalMs)} ms (${o.finishReason})` +
              `, first line ${o.firstLineMs === null ? '-' : Math.round(o.firstLineMs)} ms${o.droppedBy ? `, dropped by ${o.droppedBy}` : ''}`,
          );
        } finally {
          sub.dispose();
        }
      },
    );
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    deps.log.error(`generate failed: ${msg}`);
    void vscode.window.showErrorMessage(`Ghostline: generation failed: ${msg}`);
    return null;
  } finally {
    done();
  }
  const o = out as SelectionOutcome | null;
  if (!o || o.finishReason === 'cancelled') {
    void vscode.window.showInformationMessage('Ghostline: generation cancelled.');
    return null;
  }
  return o;
}

/** Where the result goes (plan.ts), known before the outcome is back: the streamed text is shown there. */
function insertionOffset(doc: vscode.TextDocument, selection: { start: vscode.Position; end: vscode.Position }): number {
  const at = planGeneration(documentSource(doc), selection).insertAt;
  return doc.offsetAt(new vscode.Position(at.line, at.character));
}

async function openReview(run: RunContext): Promise<void> {
  try {
    await vscode.commands.executeCommand('vscode.diff', run.left, run.right, `Ghostline: ${run.name} with the generated code`, {
      viewColumn: vscode.ViewColumn.Beside,
      preview: true,
      preserveFocus: true,
    });
  } catch {
    // No diff editor (a host without one): the message and the insertion still work.
  }
}

async function closeReview(right: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === right.toString());
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
}

const eolOf = (doc: vscode.TextDocument): '\n' | '\r\n' => (doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n');
