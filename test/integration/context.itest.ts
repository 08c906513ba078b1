// Repository context in a real extension host: the TypeScript language features find a definition in another
// file, and Ghostline: Show Prompt shows it in the prompt with its source, still on a line that uses nothing, and
// not as it was once the file changes on disk.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GhostlineApi } from '../../src/extension';
import { activeApi, openAt, setWorkspace, workspaceFolder } from './editorHelpers';
import { after, assert, before, test, waitFor } from './harness';

let api: GhostlineApi;

before(async () => {
  api = await activeApi();
  await waitFor(() => api.loader.info !== null, 'the model to load', 60_000);
});

after(async () => {
  for (const key of ['context.imports', 'context.similar', 'context.recent']) await setWorkspace(key, undefined);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

test(
  "Show Prompt: the class of the variable at the cursor, from another file, through the language server's definitions",
  async () => {
    const folder = workspaceFolder();
    fs.mkdirSync(path.join(folder, 'ctx'), { recursive: true });
    fs.writeFileSync(
      path.join(folder, 'ctx', 'shapes.ts'),
      'export class Rectangle {\n  constructor(\n    readonly width: number,\n    readonly height: number,\n  ) {}\n\n  surfaceAreaOfShape(): number {\n    return this.width * this.height;\n  }\n}\n',
    );
    // Only the language server's source is on: the definition cannot come from the import or the ring.
    await setWorkspace('context.imports', false);
    await setWorkspace('context.similar', false);
    await setWorkspace('context.recent', false);
    await openAt(
      'ctx/app.ts',
      "import { Rectangle } from './shapes';\n\nexport function describe(width: number, height: number): string {\n  const shape = new Rectangle(width, height);\n  const area = shape.\n  return String(area);\n}\n",
      'const area = shape.',
    );
    // tsserver starts on the first TypeScript file and can take a while on a busy machine: wait until it answers
    // (the test's set-up), then ask Ghostline once.
    const editor = vscode.window.activeTextEditor!;
    const rectangle = editor.document.positionAt(editor.document.getText().indexOf('new Rectangle') + 5);
    await waitFor(
      async () => ((await vscode.commands.executeCommand<unknown[]>('vscode.executeDefinitionProvider', editor.document.uri, rectangle)) ?? []).length > 0,
      'the TypeScript language features to answer',
      150_000,
      1000,
    );
    // Ghostline asks for six symbols' definitions and type definitions at once, within Show Prompt's deadline; on
    // a loaded machine a cold tsserver can miss it once (measured: a fresh CI machine), and an empty answer is
    // asked again (retryWhenEmpty): so does the test, as a user pressing Show Prompt again would.
    let report: string | undefined;
    await waitFor(
      async () => {
        report = await vscode.commands.executeCommand<string | undefined>('ghostline.showPrompt');
        return /ctx\/shapes\.ts: definitions/.test(report ?? '');
      },
      'Show Prompt to list the definition from ctx/shapes.ts',
      60_000,
      2000,
    );
    assert.ok(report, 'Show Prompt returned its report');
    assert.match(report, /ctx\/shapes\.ts: definitions/);
    assert.match(report, /Ghostline prompt for ctx\/app\.ts:5:22/);
    assert.match(report, /<file_sep>ctx\/shapes\.ts\nexport class Rectangle \{[\s\S]*surfaceAreaOfShape\(\): number/);
    assert.ok(report.indexOf('<file_sep>ctx/shapes.ts') < report.indexOf('<file_sep>ctx/app.ts'), 'the current file last');
    const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'untitled' && e.document.getText() === report);
    assert.ok(shown, 'Show Prompt opened the report beside the editor');
    // On a line that uses no symbol of another file (nor does the line above), the definition found earlier stays:
    // the context does not empty and fill again as the cursor moves, which would make the model read it again.
    await vscode.window.showTextDocument(editor.document, vscode.ViewColumn.One);
    const active = vscode.window.activeTextEditor!;
    active.selection = new vscode.Selection(7, 0, 7, 0);
    const away = await vscode.commands.executeCommand<string | undefined>('ghostline.showPrompt');
    assert.match(away ?? '', /Ghostline prompt for ctx\/app\.ts:8:1/);
    assert.match(away ?? '', /ctx\/shapes\.ts: definitions/, 'the definition of an earlier line is kept');
    // The file it came from changes on disk (not through the editor: a git checkout): the kept text, read before,
    // must not stay in the prompt as it was. It goes (the file's watcher), and comes back new where a line uses it.
    fs.writeFileSync(
      path.join(folder, 'ctx', 'shapes.ts'),
      'export class Rectangle {\n  constructor(\n    readonly width: number,\n    readonly height: number,\n  ) {}\n\n  perimeterOfShape(): number {\n    return 2 * (this.width + this.height);\n  }\n}\n',
    );
    let afterChange: string | undefined;
    await waitFor(
      async () => {
        afterChange = await vscode.commands.executeCommand<string | undefined>('ghostline.showPrompt');
        return !/surfaceAreaOfShape/.test(afterChange ?? 'surfaceAreaOfShape');
      },
      'the changed file to be read again',
      30_000,
      500,
    );
    assert.match(afterChange ?? '', /Ghostline prompt for ctx\/app\.ts:8:1/);
  },
  { timeoutMs: 180_000 },
);
