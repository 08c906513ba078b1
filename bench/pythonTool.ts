import * as path from 'node:path';

/**
 * How the bench runs a script of tools/model (a Python package: `python3 -m tools.model.NAME` from the repo
 * root, see tools/model/README.md): the arguments and the environment that let it import its siblings.
 */
export function pythonTool(root: string, script: string, args: string[], env: NodeJS.ProcessEnv = {}): { args: string[]; env: NodeJS.ProcessEnv } {
  const module = `tools.model.${path.basename(script, '.py')}`;
  return { args: ['-m', module, ...args], env: { ...process.env, ...env, PYTHONPATH: root } };
}
