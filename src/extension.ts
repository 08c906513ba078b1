export function activate(): void {}
export function deactivate(): void {}
