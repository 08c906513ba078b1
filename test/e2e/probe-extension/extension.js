// Returns a fixed suggestion after `def fibonacci(n):` + Enter, like a completion model would.
const vscode = require('vscode');

/** @param {import('vscode').ExtensionContext} context */
exports.activate = (context) => {
  context.subscriptions.push(
    vscode.languages.registerInlineCompletionItemProvider(
      { pattern: '**' },
      {
        provideInlineCompletionItems(document, position) {
          const above = position.line > 0 ? document.lineAt(position.line - 1).text : '';
          if (!above.startsWith('def fibonacci')) return [];
          const indent = document.lineAt(position.line).text.slice(0, position.character);
          const ind = indent || '    ';
          return [
            new vscode.InlineCompletionItem(
              `${indent ? '' : ind}if n < 2:\n${ind}    return n\n${ind}return fibonacci(n - 1) + fibonacci(n - 2)`,
              new vscode.Range(position, position),
            ),
          ];
        },
      },
    ),
  );
};
exports.deactivate = () => {};
